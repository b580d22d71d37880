"""Mamba (state-space decoder): 2 layers, hidden 32, state 4. Its selective scan runs
`associative_scan`, whose combine function is vmapped: the graph holds vmap-batched values
(TRK-14, RPL-24) and vmap's nesting switches (SRT-11); torch's tracker crashes on it (N7)."""

import torch
from transformers import MambaConfig, MambaForCausalLM

torch.manual_seed(0)
net = MambaForCausalLM(
    MambaConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, state_size=4, expand=2, conv_kernel=4
    )
).eval()


class Wrapper(torch.nn.Module):
    """Calls the model with keyword inputs and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor]:
        return (self.m(input_ids=input_ids, use_cache=False).logits,)


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randint(0, 100, (2, 8), generator=_g),)
