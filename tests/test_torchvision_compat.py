"""mlclab.import_torchvision: torchvision's models load whatever torch build sits beside it."""
import subprocess
import sys


def test_import_torchvision_gives_working_models_in_a_fresh_process():
    # A fresh process: whether the plain import fails depends on the wheels installed, and a
    # failed import leaves modules behind that must not leak into other tests.
    code = ("import mlclab, torch\n"
            "tv = mlclab.import_torchvision()\n"
            "m = tv.models.resnet18(weights=None).eval()\n"
            "from torchvision.models import resnet18\n"
            "assert resnet18 is tv.models.resnet18\n"
            "print(tuple(m(torch.zeros(1, 3, 64, 64)).shape))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(1, 1000)"
