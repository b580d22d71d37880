"""DistilBERT (encoder; no token types, MLM head): 2 layers, dim 32, 4 heads."""

import torch
from transformers import DistilBertConfig, DistilBertForMaskedLM

torch.manual_seed(0)
net = DistilBertForMaskedLM(
    DistilBertConfig(
        vocab_size=100, dim=32, hidden_dim=64, n_layers=2, n_heads=4, max_position_embeddings=32
    )
).eval()


class Wrapper(torch.nn.Module):
    """Calls the model with keyword inputs and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor]:
        return (self.m(input_ids=input_ids, attention_mask=attention_mask).logits,)


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randint(0, 100, (2, 8), generator=_g),
    torch.tensor([[1] * 8, [1] * 6 + [0] * 2]),
)
