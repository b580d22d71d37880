"""T5 (encoder-decoder; relative position buckets in the first layer, RMS LayerNorm):
2+2 layers, d_model 32."""

import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
net = T5ForConditionalGeneration(
    T5Config(
        vocab_size=100,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        decoder_start_token_id=0,
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
