"""Llama with attn_implementation="flex_attention" (flex_attention higher-order op with
score_mod/mask_mod get_attr subgraphs, run by its CPU fallback): 2 layers, hidden 32, 4 heads,
2 KV heads. transformers 5.23 builds its BlockMask with create_block_mask(_compile=True), which
warns on torch and so graph-breaks under fullgraph: the wrapper passes a causal BlockMask
built once outside the compiled region instead. Weights are frozen (no flex backward on CPU)."""

import torch
from torch.nn.attention.flex_attention import create_block_mask
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
cfg = LlamaConfig(
    vocab_size=100,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    attn_implementation="flex_attention",
)
net = LlamaForCausalLM(cfg).eval().requires_grad_(False)


def causal(b, h, q, kv):  # type: ignore[no-untyped-def]
    return q >= kv


class Wrapper(torch.nn.Module):
    """Calls the model with a prebuilt causal BlockMask and returns its logits as a 1-tuple."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m
        self.mask = create_block_mask(causal, B=None, H=None, Q_LEN=8, KV_LEN=8, device="cpu")

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor]:
        return (self.m(input_ids=input_ids, attention_mask=self.mask, use_cache=False).logits,)


model = Wrapper(net).eval()
_g = torch.Generator().manual_seed(0)
example_inputs = (torch.randint(0, 100, (2, 8), generator=_g),)
