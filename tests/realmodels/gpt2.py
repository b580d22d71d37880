"""GPT2 (decoder; learned positions, Conv1D, gelu_new): 2 layers, hidden 32, 4 heads."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
net = GPT2LMHeadModel(
    GPT2Config(
        vocab_size=100,
        n_positions=32,
        n_embd=32,
        n_layer=2,
        n_head=4,
        bos_token_id=0,
        eos_token_id=0,
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
