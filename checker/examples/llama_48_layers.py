"""Llama, 48 layers: hidden 64, 4 heads, 2 KV heads, intermediate 128 (`make bench`: the time
of Dynamo's capture against the rest of `fxoracle verify`). Needs `transformers` (the dev extra)."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(
    vocab_size=100,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=48,
    num_attention_heads=4,
    num_key_value_heads=2,
)
net = LlamaForCausalLM(cfg).eval()


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
