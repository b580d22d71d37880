"""DeiT (vision encoder; CLS + distillation tokens, two heads averaged): 2 layers, hidden 32."""

import torch
from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher

torch.manual_seed(0)
net = DeiTForImageClassificationWithTeacher(
    DeiTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_labels=10,
    )
).eval()


class Wrapper(torch.nn.Module):
    """Calls the model with keyword inputs and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, pixel_values: torch.Tensor) -> tuple[torch.Tensor]:
        return (self.m(pixel_values=pixel_values).logits,)


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randn(2, 3, 32, 32, generator=_g),)
