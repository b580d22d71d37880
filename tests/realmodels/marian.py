"""Marian (encoder-decoder; sinusoidal positions, scaled embeddings): 2+2 layers, d_model 32."""

import torch
from transformers import MarianConfig, MarianMTModel

torch.manual_seed(0)
net = MarianMTModel(
    MarianConfig(
        vocab_size=100,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=32,
        pad_token_id=99,
        decoder_start_token_id=99,
    )
).eval()


class Wrapper(torch.nn.Module):
    """Calls the model with keyword inputs and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(
        self, input_ids: torch.Tensor, decoder_input_ids: torch.Tensor
    ) -> tuple[torch.Tensor]:
        return (
            self.m(
                input_ids=input_ids, decoder_input_ids=decoder_input_ids, use_cache=False
            ).logits,
        )


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randint(0, 100, (2, 8), generator=_g),
    torch.randint(0, 100, (2, 8), generator=_g),
)
