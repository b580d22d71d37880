"""Llama whose MLP activation is a custom torch.autograd.Function (SiLU with a hand-written
backward): 2 layers, hidden 32, 4 heads, 2 KV heads. Dynamo captures each call as an
`autograd_function_apply` higher-order op whose forward and backward are get_attr submodules."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM


class _SiLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def]
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad * s * (1 + x * (1 - s))


class CustomSiLU(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _SiLU.apply(x)  # type: ignore[no-any-return]


torch.manual_seed(0)
cfg = LlamaConfig(
    vocab_size=100,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)
net = LlamaForCausalLM(cfg).eval()
for layer in net.model.layers:
    layer.mlp.act_fn = CustomSiLU()


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
