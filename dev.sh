#!/usr/bin/env bash
# mlclab's one entry point for people and CI.
#
#   ./dev.sh lab     set everything up, then open the lessons in JupyterLab
#   ./dev.sh test    set everything up, then run the whole test suite (extra args go to pytest)
#   ./dev.sh bench   set everything up, then run the benchmarks
#   ./dev.sh setup   only set up
#
# Set-up is idempotent: a virtualenv in .venv with mlclab (editable) and its extras, the
# WebAssembly Graphviz built into the package (js/vendor_graphviz.py: npm ci from the lock file),
# ESLint for the shipped JavaScript (js/package.json's devDependencies, npm ci in js/),
# JupyterHub's proxy for the hub load test (benchmarks/hub/: npm ci into build/hub-proxy/),
# plus the system programs the tests use (Graphviz's dot, npm, Chromium), installed with apt-get
# when missing and we are root, or named with the command to run otherwise.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
VENV=.venv
# PyTorch for lessons 5/9/13 and the import tests, at the version binder/requirements.txt pins: the
# one place torch's exact version is written (pyproject.toml's extras give only the oldest
# supported). Its "+cpu" build label is dropped, so PyPI's build of that version matches too;
# set MLCLAB_TORCH_INDEX=https://download.pytorch.org/whl/cpu to avoid PyPI's CUDA wheels.
TORCH_SPEC=${MLCLAB_TORCH_SPEC:-$(sed -n 's/^\(torch==[^+[:space:]]*\).*/\1/p' binder/requirements.txt)}

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

need_system() {   # need_system <command> <debian package> <why>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing $2 ($3)"
    if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "mlclab needs '$1' for $3. Install it with:  sudo apt-get install $2" >&2
    return 1
  fi
}

setup() {
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "mlclab needs Python 3.10 or newer ($PY is $("$PY" --version 2>&1))" >&2; exit 1
  fi
  need_system dot graphviz "drawing computation graphs"
  need_system npm npm "building the WebAssembly Graphviz that draws graphs where dot is missing"
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating the virtualenv in $VENV"
    "$PY" -m venv "$VENV"
  fi
  say "installing mlclab and its extras (first time: a few minutes; TVM alone is ~100 MB)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  local extra_index=()
  [ -n "${MLCLAB_TORCH_INDEX:-}" ] && extra_index=(--extra-index-url "$MLCLAB_TORCH_INDEX")
  "$VENV/bin/python" -m pip install -q "${extra_index[@]}" -e ".[dev,lessons]" "$TORCH_SPEC"
  # The editable install's build_py builds it too; run here as well, so it is said on screen
  # (pip -q hides build output) and a stale copy is rebuilt.
  "$VENV/bin/python" js/vendor_graphviz.py
  # ESLint, which tests/test_lint.py runs on mlclab/notebook/static/: the lock's devDependencies,
  # which the vendored build leaves out. Installed again whenever the lock file is newer than
  # what npm last installed (npm ci empties node_modules first).
  if [ ! -x js/node_modules/.bin/eslint ] || \
     [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
    say "installing ESLint for the JavaScript (npm ci in js/)"
    (cd js && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  fi
  # JupyterHub's proxy for the hub load test and its smoke test (npm ci into build/hub-proxy/)
  "$VENV/bin/python" benchmarks/hub_load.py --install-proxy
}

case "${1:-help}" in
  setup)
    setup ;;
  lab)
    setup
    say "opening the lessons in JupyterLab (Ctrl-C to stop)"
    as_root=()
    [ "$(id -u)" = 0 ] && as_root=(--allow-root)   # JupyterLab refuses root without it
    exec "$VENV/bin/python" -m jupyterlab --ServerApp.root_dir=lessons "${as_root[@]}" "${@:2}" ;;
  test)
    setup
    need_system chromium chromium "the real-browser notebook tests"
    say "running the test suite"
    exec "$VENV/bin/python" -m pytest "${@:2}" ;;
  bench)
    setup
    exec "$VENV/bin/python" benchmarks/run_all.py "${@:2}" ;;
  *)
    sed -n '2,14p' "$0"; exit 2 ;;
esac
