"""Whisper (speech encoder-decoder; conv front end over log-mel features, sinusoidal encoder
positions): 2 + 2 layers, d_model 32, 4 heads, 8 mel bins."""

import torch
from transformers import WhisperConfig, WhisperForConditionalGeneration

torch.manual_seed(0)
net = WhisperForConditionalGeneration(
    WhisperConfig(
        vocab_size=100,
        num_mel_bins=8,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_source_positions=8,
        max_target_positions=16,
        decoder_start_token_id=1,
        pad_token_id=0,
    )
).eval()


class Wrapper(torch.nn.Module):
    """Calls the model with features and decoder ids and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, features: torch.Tensor, decoder_ids: torch.Tensor) -> tuple[torch.Tensor]:
        return (
            self.m(input_features=features, decoder_input_ids=decoder_ids, use_cache=False).logits,
        )


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (
    torch.randn(1, 8, 16, generator=_g),
    torch.randint(0, 100, (1, 4), generator=_g),
)
