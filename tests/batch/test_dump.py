"""``s2s dump FILE.py:FUNC --mode vmap``: the batched code, runnable as printed."""
import textwrap

import numpy as np

from s2s.cli.main import main

SOURCE = textwrap.dedent('''
    import numpy as np

    def predict(W, b, inputs):
        return 0.5 * (np.tanh((np.dot(inputs, W) + b) / 2) + 1)

    def halvings(x):
        n = 0.0
        while x > 1.0:
            x = x / 2.0
            n = n + 1.0
        return n
''')


def _dump(tmp_path, capsys, *argv):
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    rc = main(["dump", f"{path}:{argv[0]}", "--mode", "vmap", "--color", "never", *argv[1:]])
    out = capsys.readouterr().out
    assert rc == 0
    return out


def test_dump_vmap_prints_batched_code_that_runs(tmp_path, capsys):
    out = _dump(tmp_path, capsys, "predict", "--signature", "f64[:], f64, f64[:, :]",
                "--in-axes", "None,None,0")
    assert out.startswith("def vmap_predict(W, b, inputs):")
    ns = {}
    exec("import numpy as np\nimport s2s_runtime as rt\n" + out, ns)
    W, inputs = np.array([0.5, -1.0]), np.random.default_rng(0).normal(size=(5, 3, 2))
    want = np.stack([0.5 * (np.tanh((x @ W + 0.1) / 2) + 1) for x in inputs])
    np.testing.assert_allclose(ns["vmap_predict"](W, 0.1, inputs), want)


def test_dump_vmap_of_a_while_loop_shows_the_mask(tmp_path, capsys):
    out = _dump(tmp_path, capsys, "halvings")
    assert "np.logical_and" in out and "rt.batch_select" in out and "np.any" in out
    ns = {}
    exec("import numpy as np\nimport s2s_runtime as rt\n" + out, ns)
    np.testing.assert_allclose(ns["vmap_halvings"](np.array([0.5, 3.0, 17.0])), [0, 2, 5])
