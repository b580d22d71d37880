"""ConvNeXt (vision CNN; depthwise 7x7 conv, LayerNorm, layer scale):
depths [2, 2], widths 16/32."""

import torch
from transformers import ConvNextConfig, ConvNextForImageClassification

torch.manual_seed(0)
net = ConvNextForImageClassification(
    ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[2, 2], image_size=32, num_labels=10)
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
