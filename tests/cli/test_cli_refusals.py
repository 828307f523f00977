"""``s2s dump`` refuses what it cannot do with one clear line and exit status 2 (issue 19,
group 8): an argument kind jit does not compile, a GPU architecture LLVM does not know,
``--arch`` with a mode that has no GPU."""
import pytest

from s2s.backend.cuda.target import KNOWN_ARCHS, check_arch
from s2s.cli.main import main

MODEL = '''\
import s2s


def first(x):
    return x[0] * 2.0


def scale(x):
    return x * 2.0


def jacobian_of_rows(x):
    return s2s.jacfwd(rows)(x)


def rows(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] ** 2
    return s
'''


@pytest.fixture()
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return str(path)


@pytest.mark.parametrize("signature, what", [("i32[:]", "dtype int32"), ("i32", "np.int32"),
                                             ("c64[:, :]", "dtype complex64")])
def test_an_argument_kind_jit_does_not_compile(model, capsys, signature, what):
    code = main(["dump", model + ":scale", "--mode", "llvm", "--signature", signature])
    err = capsys.readouterr().err
    assert code == 2
    assert "bug in s2s" not in err and "internal error" not in err
    assert what in err and "argument 'x'" in err and signature in err


@pytest.mark.parametrize("arch", ["sm_999", "sm_10", "sm_81", "sm_80a", "compute_80", "", "SM_80"])
def test_unknown_architectures_are_refused(model, capsys, arch):
    code = main(["dump", model + ":scale", "--mode", "ptx", "--signature", "f64", "--arch", arch])
    err = capsys.readouterr().err
    assert code == 2 and f"unknown GPU architecture {arch!r}" in err and "sm_90" in err


def test_arch_with_a_mode_without_a_gpu_is_refused(model, capsys):
    code = main(["dump", model + ":scale", "--mode", "grad", "--arch", "sm_90"])
    err = capsys.readouterr().err
    assert code == 2 and "--arch" in err and "ptx" in err


def test_known_architectures_are_accepted():
    for n in KNOWN_ARCHS:
        assert check_arch(f"sm_{n}") == f"sm_{n}"
    assert check_arch("sm_90a") == "sm_90a" and check_arch("sm_100f") == "sm_100f"
    with pytest.raises(ValueError, match="unknown GPU architecture"):
        check_arch(None)


def test_an_error_of_the_users_code_on_the_example_arguments_is_not_an_internal_error(
        model, capsys):
    # dump runs jacfwd on the default example argument, a number, whose shape has no
    # axis 0: the user's IndexError at the user's line, and how to pass other arguments
    code = main(["dump", model + ":jacobian_of_rows", "--mode", "grad"])
    err = capsys.readouterr().err
    assert code == 2
    assert "bug in s2s" not in err and "internal error" not in err
    assert "IndexError" in err and "raised here" in err and "x.shape[0]" in err
    assert "--args" in err
