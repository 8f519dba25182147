# tokenctl: build, test, demo and install. `make test` and `make demo` install what they
# need on a fresh Debian machine.

PREFIX ?= /usr/local
SWIFT ?= swift
# The date stamped into the generated man pages; fixed so that regenerating them is
# reproducible. Bump it with the version.
MAN_DATE := 2026-11-21
KEYRING := Tests/Support/with-private-keyring
DEBIAN_PACKAGES := libsecret-1-dev libcurl4-openssl-dev libsecret-tools gnome-keyring dbus libglib2.0-bin pkg-config git python3 python3-venv

.PHONY: all deps build test demo bench man check-man lint install clean fuzz fuzz-short

all: build

# Installs the Debian packages that are missing (as root, or through sudo).
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build --build-tests

# The whole suite runs inside a private session bus with a throw-away, unlocked keyring.
test: build check-man auth-server-deps
	$(KEYRING) $(SWIFT) test --skip-build

demo: deps auth-server-deps
	$(SWIFT) build
	$(KEYRING) Tests/Support/demo .build/debug/tokenctl

# `tokenctl token` against `secret-tool lookup` on the same item, release build.
bench: deps
	$(SWIFT) build -c release --static-swift-stdlib
	$(KEYRING) Tests/Support/bench-token .build/release/tokenctl

# libFuzzer over every parser of untrusted input (Tests/Fuzz/run): 1,000,000 runs per
# target, or 20,000 for CI. A crash fails the target and names its reproducer. The
# sanitizer and libFuzzer runtimes come with the Swift toolchain; deps brings libcurl.
fuzz: deps
	SWIFT=$(SWIFT) Tests/Fuzz/run --runs 1000000

fuzz-short: deps
	SWIFT=$(SWIFT) Tests/Fuzz/run --runs 20000

# Regenerates man/ from the command definitions (the hand-written pages are left alone).
man: deps
	Tests/Support/generate-man $(MAN_DATE) man

# Fails when the checked-in pages differ from what the command definitions produce.
check-man: deps
	@tmp=$$(mktemp -d) && Tests/Support/generate-man $(MAN_DATE) $$tmp \
	  && for page in $$tmp/*; do \
	       diff -u man/$$(basename $$page) $$page || { echo "man/ is out of date: run 'make man'"; rm -rf $$tmp; exit 1; }; \
	     done; rm -rf $$tmp

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Plugins Tests

install: deps
	$(SWIFT) build -c release --static-swift-stdlib --product tokenctl
	$(SWIFT) build -c release --static-swift-stdlib --product git-credential-tokenctl
	install -D -m 755 .build/release/tokenctl $(DESTDIR)$(PREFIX)/bin/tokenctl
	install -m 755 .build/release/git-credential-tokenctl $(DESTDIR)$(PREFIX)/bin/git-credential-tokenctl
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/

# The Python environment of the test authorization server (Tests/AuthServer). Re-created
# only when requirements.txt or the Python version changes.
PYTHON_VENV := .build-python/venv

.PHONY: auth-server-deps
auth-server-deps:
	@key="$$(python3 -c 'import sys; print(sys.version)' | tr -d '\n') $$(sha256sum Tests/AuthServer/requirements.txt | cut -d' ' -f1)"; \
	if [ -x $(PYTHON_VENV)/bin/python ] && [ "$$(cat $(PYTHON_VENV)/.requirements-stamp 2>/dev/null)" = "$$key" ]; then exit 0; fi; \
	echo "Creating $(PYTHON_VENV) from Tests/AuthServer/requirements.txt"; \
	rm -f $(PYTHON_VENV)/.requirements-stamp; \
	python3 -m venv --clear $(PYTHON_VENV) \
	  || { echo "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 1; }; \
	$(PYTHON_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r Tests/AuthServer/requirements.txt \
	  && echo "$$key" > $(PYTHON_VENV)/.requirements-stamp

clean:
	rm -rf .build .build-fuzz
