"""GPT2 in train mode: dropout 0.1 on embeddings, attention and residuals, parameters that
require grad. 3 layers, hidden 32, 4 heads. Every region draws random numbers."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
net = GPT2LMHeadModel(
    GPT2Config(
        vocab_size=100,
        n_positions=32,
        n_embd=32,
        n_layer=3,
        n_head=4,
        resid_pdrop=0.1,
        embd_pdrop=0.1,
        attn_pdrop=0.1,
    )
)


class Wrapper(torch.nn.Module):
    """Calls the model with keyword inputs and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor]:
        return (self.m(input_ids=input_ids, use_cache=False).logits,)


model = Wrapper(net).train()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randint(0, 100, (2, 8), generator=_g),)
