"""Mixtral (sparse mixture-of-experts decoder; top-2 routing over 4 experts, GQA): 2 layers,
hidden 32, 4 heads, 2 KV heads. Routing writes an index tensor in place (`inv_perm[...] = ...`)
between region nodes (RPL-9, B13)."""

import torch
from transformers import MixtralConfig, MixtralForCausalLM

torch.manual_seed(0)
net = MixtralForCausalLM(
    MixtralConfig(
        vocab_size=100,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
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
