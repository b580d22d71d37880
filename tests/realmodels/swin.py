"""Swin (vision; shifted windows of 4, relative position bias table, patch merging):
depths [2, 2], embed 16."""

import torch
from transformers import SwinConfig, SwinForImageClassification

torch.manual_seed(0)
net = SwinForImageClassification(
    SwinConfig(
        image_size=32,
        patch_size=2,
        embed_dim=16,
        depths=[2, 2],
        num_heads=[2, 4],
        window_size=4,
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
