"""GPT-J (decoder; parallel attention and MLP, partial rotary positions gathered by index): 2
layers, hidden 32, 4 heads, rotary dim 4."""

import torch
from transformers import GPTJConfig, GPTJForCausalLM

torch.manual_seed(0)
net = GPTJForCausalLM(
    GPTJConfig(vocab_size=100, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64)
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
