"""ELECTRA discriminator (encoder; per-token binary head): 2 layers, hidden 32, 4 heads."""

import torch
from transformers import ElectraConfig, ElectraForPreTraining

torch.manual_seed(0)
net = ElectraForPreTraining(
    ElectraConfig(
        vocab_size=100,
        embedding_size=32,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=32,
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
