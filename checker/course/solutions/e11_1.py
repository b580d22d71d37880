"""11.1 (DIF-21, EFF-1): a position indexes the node's flat node arguments, the `Node`s of
`(args, kwargs)` in `torch.fx.map_arg` order, constants skipped. `x.add_(y)` has `(l_x_, l_y_)`
and writes `x`: 0. `y[i] = 0.5` is `setitem(l_y_, l_i_, 0.5)`: `(l_y_, l_i_)`, writes `y`: 0.
`torch.add(x, y, out=c)` has `(l_x_, l_y_)` then the kwarg `c`: writes position 2, `c`."""

ADD_INPLACE = [0]
SETITEM = [0]
ADD_OUT = [2]
WRITTEN = ["l_x_", "l_y_", "c"]
