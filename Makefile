# The two commands a newcomer needs: `make serve` (read the course) and `make test` (check everything).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: serve site check test labs-ci clean

$(STAMP): pyproject.toml package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@# No GPU here: PyTorch's CPU build (a few hundred MB) rather than the CUDA one PyPI gives (several GB).
	@if ! $(BIN)/python -c "import torch" 2>/dev/null && ! command -v nvidia-smi >/dev/null 2>&1 \
	    && ! command -v rocm-smi >/dev/null 2>&1; then \
	  echo "no GPU found: installing the CPU build of PyTorch"; \
	  $(BIN)/pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu \
	    || echo "the CPU index was unreachable: pip will take PyTorch from PyPI"; \
	fi
	$(BIN)/pip install --quiet -e '.[test,labs]'
	@# axe-core at the exact version package-lock.json pins, for the accessibility tests
	@if command -v npm >/dev/null 2>&1; then npm ci --silent --no-audit --no-fund; fi
	touch $(STAMP)

serve: $(STAMP)  ## read the course at http://127.0.0.1:8000, reloading on every edit
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000 --livereload

site: $(STAMP)  ## strict build into site/
	$(BIN)/mkdocs build --strict --site-dir site

check: $(STAMP)  ## the module contract, every violation in one run
	$(BIN)/tutor check --strict

# pytest-xdist workers for `make test` (0: one process, the default). On a 2-core machine 4 workers were not
# faster (43 min against 36) and made the browser frame-time tests fail; try `make test TEST_WORKERS=4` on more cores.
TEST_WORKERS ?= 0

test: $(STAMP)  ## set-up plus the whole suite
	$(BIN)/tutor check --strict
	$(BIN)/python -m pytest -q -rs -n $(TEST_WORKERS)  # -rs: every skip is listed with its reason

clean:
	rm -rf site build $(VENV) node_modules
