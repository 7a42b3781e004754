#!/bin/bash
# An mlclab class on one server with The Littlest JupyterHub (TLJH): run as root on a fresh
# Ubuntu 22.04/24.04 machine. docs/class.md says how big the machine must be for N students
# (the figures are from benchmarks/hub_load.py) and what each setting below is for.
#
#   sudo ADMIN=instructor MLCLAB_REPO=https://github.com/ORG/mlclab bash deploy/tljh/install.sh
#
# Idempotent: running it again re-applies the settings and re-warms the class's compile cache.
set -euo pipefail

ADMIN=${ADMIN:?set ADMIN to the user name of the instructor}
MLCLAB_REPO=${MLCLAB_REPO:?set MLCLAB_REPO to the mlclab repository to install from}
MLCLAB_REF=${MLCLAB_REF:-main}
# Per student, from the measured footprint (docs/class.md, "Memory" and "CPU").
MEMORY_LIMIT=${MEMORY_LIMIT:-1.9G}
CPU_LIMIT=${CPU_LIMIT:-2}
THREADS=${THREADS:-1}             # MLCLAB_NUM_THREADS: one compile thread per kernel in class
CULL_IDLE_S=${CULL_IDLE_S:-1800}
SRC=/srv/mlclab                   # the checkout: lessons and binder/ pins
CACHE=/srv/mlclab-cache           # the class's read-only compile cache
USER_ENV=/opt/tljh/user           # TLJH's environment for every user's server and kernel

apt-get update -qq
apt-get install -y -qq git graphviz python3 python3-venv curl >/dev/null

if [ -d "$SRC/.git" ]; then
  git -C "$SRC" fetch -q origin "$MLCLAB_REF" && git -C "$SRC" checkout -q FETCH_HEAD
else
  git clone -q --branch "$MLCLAB_REF" "$MLCLAB_REPO" "$SRC"
fi

if [ ! -x /opt/tljh/hub/bin/tljh-config ]; then
  # TLJH's installer, as its docs give it.
  curl -fsSL https://tljh.jupyter.org/bootstrap.py | python3 - --admin "$ADMIN"
fi
# The user environment gets binder/'s exact pins, as the Binder and Kubernetes images do
# (JupyterLab 4.6 with Notebook 7.6 over TLJH's own, PyTorch's CPU build).
"$USER_ENV/bin/pip" install -q -r "$SRC/binder/requirements.txt"

# mlclab itself, and the rest of binder/postBuild (the WebAssembly Graphviz, a slimmer torch).
(cd "$SRC" && PATH="$USER_ENV/bin:$PATH" bash binder/postBuild)

# Per-user limits (TLJH's systemd spawner enforces them: MemoryMax, CPUQuota).
tljh-config set limits.memory "$MEMORY_LIMIT"
tljh-config set limits.cpu "$CPU_LIMIT"
tljh-config set user_environment.default_app jupyterlab
# Idle culling: a culled student keeps files and compile cache (both in the home directory).
tljh-config set services.cull.enabled true
tljh-config set services.cull.timeout "$CULL_IDLE_S"
tljh-config set services.cull.every 300

# The class's environment for every server: the shared cache read first, then each student's
# own (~/.cache/mlclab, MLCLAB_CACHE_DIR's default), and the thread count.
cat > /opt/tljh/config/jupyterhub_config.d/mlclab.py <<EOF
c.Spawner.environment.update({
    "MLCLAB_SHARED_CACHE_DIR": "$CACHE",
    "MLCLAB_NUM_THREADS": "$THREADS",
})
EOF

# Lessons in every new student's home (TLJH makes homes from /etc/skel).
rm -rf /etc/skel/lessons && cp -r "$SRC/lessons" /etc/skel/lessons

# Warm the class's compile cache once, owned by root and readable by all: students read it and
# cannot change it.
mkdir -p "$CACHE"
"$USER_ENV/bin/python" -m mlclab.course warm-cache "$SRC"/lessons/[0-9]*.ipynb --to "$CACHE"
chmod -R a+rX,go-w "$CACHE"

tljh-config reload
echo "mlclab class ready: log in as $ADMIN, add students in the admin panel (docs/class.md)."
