# tokenctl: build, test, demo and install. `make test` and `make demo` install what they
# need on a fresh Debian machine.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# The full program, where the front end ($(BINDIR)/tokenctl) looks for it: beside $(BINDIR)
# (with PREFIX=/usr, /usr/libexec/tokenctl).
LIBEXECDIR = $(abspath $(BINDIR)/../libexec/tokenctl)
# systemd looks for user units in /usr/local/lib/systemd/user and /usr/lib/systemd/user.
SYSTEMD_USER_DIR ?= $(PREFIX)/lib/systemd/user
# yes: `make install` enables the agent's socket for every user session with a link in
# $(SYSTEMD_USER_DIR)/sockets.target.wants. The Debian package says no and lets
# dh_installsystemduser enable it, as Debian's packages of user services do.
ENABLE_USER_SOCKET ?= yes
# Where each shell looks for the completions packages install. Debian's zsh has
# /usr/local/share/zsh/site-functions on its fpath; bash-completion searches every folder
# of XDG_DATA_DIRS, by default /usr/local/share and /usr/share. fish searches them only
# when XDG_DATA_DIRS is set (desktop sessions set it), else /usr/share alone: for a shell
# without it, FISH_COMPLETION_DIR=/etc/fish/completions.
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPLETION_DIR ?= $(PREFIX)/share/fish/vendor_completions.d
SWIFT ?= swift
# The date stamped into the generated man pages; fixed so that regenerating them is
# reproducible. Bump it with the version.
MAN_DATE := 2026-11-21
KEYRING := Tests/Support/with-private-keyring.sh
# libsecret-1-0 and libcurl4 (which libcurl4-openssl-dev brings) are opened with dlopen at
# run time. The build uses libcurl's headers but not libsecret's (Sources/CLibSecret
# declares what it uses): libsecret-1-dev and pkg-config are for `make check-libsecret`,
# which compares those declarations with Debian's headers, and for the benchmark's
# libsecret helper.
# systemd: systemd-socket-activate for the agent's socket activation test, and
# systemd-analyze for `make check-units`. gnome-keyring pulls it in only through one
# alternative of its session bus (dbus-user-session; dbus-x11 does without), so it is named.
# python3-dbus and python3-gi: the desktop program of the D-Bus tests (a maintained D-Bus
# library, as a Python application would use) and the tests' notification server.
# glewlwyd: a real OpenID Connect server that registers clients (RFC 7591, RFC 7592), for
# the dynamic registration tests (Tests/Support/glewlwyd-server.py); openssl makes its RS256
# key. The tests run their own glewlwyd on a private SQLite file. On a host with systemd the
# package also enables and starts the system's glewlwyd (port 4593, every interface, user
# admin with password "password"): install-packages stops and disables it again when it was
# the one to install it.
# openssh-server: the forwarding tests run an sshd of their own on 127.0.0.1 with Debian's
# sshd_config (Tests/TokenCtlCLITests/Integration/ForwardingTests.swift). On a host with
# systemd the package also enables and starts the system's sshd on every interface:
# install-packages stops and disables it again when it was the one to install it.
# zsh and fish: the completion tests run the scripts `make install` installs in each shell
# (bash is there already).
# curl: the tests script the Microsoft identity platform stand-in and the stub servers with it.
# bubblewrap and xdg-dbus-proxy: the sandboxed-app tests run a desktop program as Flatpak
# runs an app (Tests/Support/flatpak-run.py): in a bubblewrap sandbox with a /.flatpak-info,
# reaching the agent through a real xdg-dbus-proxy with Flatpak's filter, so that consent
# is tested against what it must tell apart. (flatpak itself would need a runtime from a
# remote, and the agent looks only at these two.)
# mercurial and mercurial-keyring: the keyring backend's Mercurial test clones with the real
# hg, whose mercurial_keyring asks Debian's Python keyring, and so our backend, for the
# password (Tests/Support/hg-http-server.py serves the repository).
# skopeo: the Docker credential helper's tests pull from a registry stand-in with the real
# containers tools' client (Tests/Support/docker-registry-server.py), as Podman and Buildah do.
# keepassxc, xvfb and xdotool: `make test` runs the keyring store's provider suite against
# KeePassXC as well (Tests/Support/with-secret-service.sh), the Secret Service provider whose
# defaults differ most from gnome-keyring's (access confirmation, merged attributes, one
# collection per database); KeePassXC is a Qt program and needs an X server (Xvfb), and
# xdotool answers its dialogs as a user would.
# libkf5wallet-bin and libqca-qt5-2-plugins: kwalletd5, KDE's Secret Service, for `make
# test-providers`; without QCA's plugins kwalletd5 cannot encrypt a wallet.
# python3-secretstorage: the provider tests read our items as Python programs do (keyring's
# Secret Service backend uses it).
# chromium, chromium-driver and dunst: `make test-desktop` signs in with a real browser and
# asks for consent in a real notification daemon (dunst 1.9, which offers actions).
# lemonldap-ng, lemonldap-ng-fastcgi-server and nginx: LemonLDAP::NG 2.16, an enterprise
# OpenID Connect provider, for `make test-lemonldap` (Tests/Support/lemonldap-ng-server.sh
# runs its own portal on 127.0.0.1). Its admin CLI needs libemail-sender-perl and
# libmime-tools-perl, its portal libgd-securityimage-perl: recommended, so named for hosts
# that skip recommends. On a host with systemd the packages also start the system's nginx
# (port 80, every interface) and FastCGI server: install-packages stops and disables them
# again when it was the one to install them.
DEBIAN_PACKAGES := binutils libstdc++-12-dev libgcc-12-dev libsecret-1-0 libsecret-1-dev libcurl4-openssl-dev libsecret-tools gnome-keyring dbus libglib2.0-bin pkg-config git python3 python3-venv strace systemd python3-dbus python3-gi glewlwyd openssl zsh fish curl bubblewrap xdg-dbus-proxy keepassxc xvfb xdotool libkf5wallet-bin libqca-qt5-2-plugins python3-secretstorage skopeo mercurial mercurial-keyring openssh-server chromium chromium-driver dunst lemonldap-ng lemonldap-ng-fastcgi-server nginx libemail-sender-perl libmime-tools-perl libgd-securityimage-perl
# Only `make bench` needs these: the timer, the baselines it measures us against (curl,
# git's contrib libsecret helper, built from git's documentation directory with
# build-essential, git-credential-oauth), GNU time for peak memory, valgrind to count
# instructions; socat for the ssh round trip row 19 adds to the local agent's answer.
BENCH_PACKAGES := hyperfine curl git-credential-oauth build-essential time valgrind oidc-agent-cli socat

.PHONY: keyring-backend-deps
.PHONY: all deps bench-deps static-cxx build test $(TEST_PARTS) test-providers demo bench man check-man check-libsecret check-units lint install install-completions clean hardening fuzz fuzz-short check-release check-install startup-order

all: build

# Installs the Debian packages that are missing (as root, or through sudo).
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEBIAN_PACKAGES)"

bench-deps: deps
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(BENCH_PACKAGES)"

.PHONY: install-packages
install-packages:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing || exit 1; \
	  case " $$missing " in *" glewlwyd "*) \
	    if [ -d /run/systemd/system ]; then \
	      echo "Stopping and disabling the system's glewlwyd service (the tests run their own on 127.0.0.1)"; \
	      $$sudo systemctl disable --now glewlwyd.service; \
	    fi;; \
	  esac; \
	  case " $$missing " in *" nginx "*|*" lemonldap-ng-fastcgi-server "*) \
	    if [ -d /run/systemd/system ]; then \
	      echo "Stopping and disabling the system's nginx and LemonLDAP::NG FastCGI server (the tests run their own on 127.0.0.1)"; \
	      $$sudo systemctl disable --now nginx.service lemonldap-ng-fastcgi-server.service; \
	    fi;; \
	  esac; \
	  case " $$missing " in *" openssh-server "*) \
	    if [ -d /run/systemd/system ]; then \
	      echo "Stopping and disabling the system's sshd (the tests run their own on 127.0.0.1)"; \
	      $$sudo systemctl disable --now ssh.service ssh.socket; \
	    fi;; \
	  esac; \
	fi

build: deps
	$(SWIFT) build --build-tests

# The hardening checks leave their figures here; Tests/Hardening/report.py makes the table.
HARDENING := $(CURDIR)/.build/hardening.tsv
HARDENING_TESTS := FaultMatrixTests|GrantJournalTests|GrantJournalFaultTests|KeyringFaultTests|KeyringCommandTests|SecretHygieneTests|SignInIntegrationTests|FreshnessTests|ServerRecoveryTests|AgentLifecycleTests|AgentIntegrationTests/(aStoppedAgentsFullListenQueue|anAgentThatGoesSilent|anAgentStoppedInTheMiddle)
CRASH_HARNESS := Tests/Hardening/crash-harness.py .build/debug/tokenctl .build/debug/git-credential-tokenctl

# `make test` runs these parts in turn, stops at the first that fails, and prints each
# part's time at the end; each is also a target of its own (`make test-agent`). Every part
# runs inside a private session bus with a throw-away, unlocked keyring.
TEST_PARTS := test-checks test-suite test-exit test-agent test-keepassxc test-hardening
# What a part needs when it runs alone; `make test` makes it once, before the first part.
TEST_PREREQS ?= build auth-server-deps keyring-backend-deps
TEST_TIMES := $(CURDIR)/.build/test-times
test: build auth-server-deps keyring-backend-deps
	@rm -f $(HARDENING) $(TEST_TIMES)
	@status=0; for part in $(TEST_PARTS); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$part TEST_PREREQS= || status=$$?; \
	  echo "$$part $$(( $$(date +%s) - start ))" >> $(TEST_TIMES); \
	  [ $$status = 0 ] || { failed=$$part; break; }; \
	done; \
	echo "make test: time of each part"; \
	while read -r part seconds; do printf '  %-16s %4d min %02d s\n' $$part $$((seconds / 60)) $$((seconds % 60)); done < $(TEST_TIMES); \
	[ $$status = 0 ] || echo "make test: $$failed failed; \`make $$failed\` runs it alone"; \
	exit $$status

# The generated man pages, the front end's copy of the root help, libsecret's declarations
# and the agent's systemd units.
test-checks: $(TEST_PREREQS) check-man check-front-end-help check-libsecret check-units

# The whole Swift suite. It leaves the hardening figures of its fault, keyring, listener
# and secret-scan tests in $(HARDENING), for test-hardening's table.
test-suite: $(TEST_PREREQS)
	rm -f $(HARDENING)
	HARDENING_SUMMARY=$(HARDENING) $(KEYRING) $(SWIFT) test --skip-build

# The exit tests alone (see Tests/SecretServiceStoreTests/ExitTestGate.swift).
test-exit: $(TEST_PREREQS)
	TOKENCTL_EXIT_TESTS=1 $(KEYRING) $(SWIFT) test --skip-build --filter 'KeyringChangeMonitorTests|KeyringDaemonRestartTests|SecretServiceStoreMemoryTests|SecretServiceUnlockTests|SecretServiceWireWriteLoadingTests'

# The command line's and the git helper's suites again, every client they start asking a
# tokenctl agent first (Tests/Support/with-agent.sh): the same outputs, exit codes and errors
# either way, since a client must not behave differently for having an agent. The agent's
# own suite starts agents of its own. Their `tokenctl` is the front end, as `make install`
# installs it, so that what users run is what is tested.
test-agent: $(TEST_PREREQS)
	TOKENCTL_BIN=$(CURDIR)/.build/debug/tokenctl-front-end $(KEYRING) Tests/Support/with-agent.sh $(SWIFT) test --skip-build --filter 'TokenCtlCLITests\.|CredentialHelpersTests\.' \
	  --skip 'AgentIntegrationTests|KeyringChangeMonitorTests|KeyringDaemonRestartTests|SecretServiceStoreMemoryTests|SecretServiceUnlockTests'

# The keyring store against KeePassXC as it ships (Tests/Support/with-secret-service.sh); every
# provider is `make test-providers`.
# --no-parallel: KeePassXC refuses to lock a database while another test's dialog is up.
test-keepassxc: $(TEST_PREREQS)
	$(PROVIDER_RUN) Tests/Support/with-secret-service.sh keepassxc $(SWIFT) test --skip-build --no-parallel --filter '$(PROVIDER_TESTS)'

# The hardening checks in their short form (30 kills, 20,000 fuzz runs per target), then
# the hardening table. The table also needs test-suite's figures: run alone, this part runs
# the hardening suites first when they are not there. A second run replaces its own rows.
test-hardening: $(TEST_PREREQS)
	@grep -q '^fault' $(HARDENING) 2>/dev/null || { \
	  echo "test-hardening: no figures of the suite in $(HARDENING): running the hardening suites first"; \
	  HARDENING_SUMMARY=$(HARDENING) $(KEYRING) $(SWIFT) test --skip-build --filter '$(HARDENING_TESTS)'; }
	@if [ -f $(HARDENING) ]; then sed -i '/^crash\t/d; /^fuzz\t/d' $(HARDENING); fi
	HARDENING_SUMMARY=$(HARDENING) $(KEYRING) $(CRASH_HARNESS) --kills 30
	FUZZ_SUMMARY=$(HARDENING) SWIFT=$(SWIFT) Tests/Fuzz/run.sh --runs 20000
	Tests/Hardening/report.py $(HARDENING)

# The Secret Service providers tokenctl supports, each started headless with its defaults
# by Tests/Support/with-secret-service.sh (gnome-keyring, KeePassXC 2.7, kwalletd5), running
# the store's provider suite and the tokenctl binary against each, directly and through an
# agent (SecretServiceTokenStoreTests pins gnome-keyring's exact items: KeePassXC adds its
# entry's fields as attributes). TOKENCTL_TEST_MATRIX=1 adds, per provider, a sign-in at the
# test authorization server (Tests/AuthServer) followed by refresh, a token for other
# scopes, git's credential helper, the same through an agent, and revoke. Then a KeePassXC
# dialog answered after 30 s (past GDBus's 25 s), and KeePassXC's dismissed prompt, alone,
# since KeePassXC completes no prompt after it.
PROVIDERS := gnome-keyring keepassxc kwallet
# Runs a provider's command once more when the provider itself died under it
# (with-secret-service.sh's status 75: KeePassXC 2.7.4 segfaults now and then, and then
# libsecret would wait for ever); the crash stays in the log, and a second one fails.
PROVIDER_RUN := sh -c 'status=0; "$$@" || status=$$?; if [ $$status = 75 ]; then \
  echo "test-providers: the provider died under the tests (above); running them once more"; "$$@"; exit; fi; \
  exit $$status' provider-run
PROVIDER_TESTS := KeyringProviderTests|KeyringProviderCommandTests
test-providers: build auth-server-deps
	for provider in $(PROVIDERS); do \
	  echo "== $$provider"; \
	  $(PROVIDER_RUN) env TOKENCTL_TEST_MATRIX=1 Tests/Support/with-secret-service.sh $$provider $(SWIFT) test --skip-build \
	    --no-parallel --filter '$(PROVIDER_TESTS)' || exit 1; \
	  $(PROVIDER_RUN) Tests/Support/with-secret-service.sh $$provider Tests/Support/with-agent.sh $(SWIFT) test --skip-build \
	    --no-parallel --filter 'KeyringProviderCommandTests' || exit 1; \
	done
	$(PROVIDER_RUN) env TOKENCTL_TEST_SLOW_PROMPT=1 Tests/Support/with-secret-service.sh keepassxc $(SWIFT) test --skip-build \
	  --filter 'KeyringProviderCommandTests/aPromptAnsweredAfterThirtySecondsIsWaitedFor'
	$(PROVIDER_RUN) env TOKENCTL_TEST_DISMISS=1 Tests/Support/with-secret-service.sh keepassxc $(SWIFT) test --skip-build \
	  --filter 'KeyringProviderTests/aDismissedPromptIsLocked'

# What the desktop adds, against real parts (a few minutes): `tokenctl login` in Debian's
# Chromium, headless, driven by Selenium (Tests/Support/chromium-browser.py), and the agent's
# notifications in dunst on Xvfb, answered through dunst's own menu. Screenshots and page
# texts stay in $(DESKTOP_ARTEFACTS). The suites skip without TOKENCTL_TEST_DESKTOP.
DESKTOP_VENV := .build-python/desktop
DESKTOP_ARTEFACTS := $(CURDIR)/.build/test-artefacts/desktop
.PHONY: test-desktop desktop-test-deps
test-desktop: build auth-server-deps desktop-test-deps
	@echo "test-desktop: screenshots and page texts in $(DESKTOP_ARTEFACTS)"
	TOKENCTL_TEST_DESKTOP=1 TOKENCTL_TEST_ARTEFACTS=$(DESKTOP_ARTEFACTS) $(KEYRING) $(SWIFT) test --skip-build \
	  --filter 'DesktopBrowserTests|DesktopNotificationDaemonTests'

# Selenium for Tests/Support/chromium-browser.py, pinned in Tests/Support/desktop-requirements.txt.
desktop-test-deps:
	@key="$$(python3 -c 'import sys; print(sys.version)' | tr -d '\n') $$(sha256sum Tests/Support/desktop-requirements.txt | cut -d' ' -f1)"; \
	if [ -x $(DESKTOP_VENV)/bin/python ] && [ "$$(cat $(DESKTOP_VENV)/.requirements-stamp 2>/dev/null)" = "$$key" ]; then exit 0; fi; \
	echo "Creating $(DESKTOP_VENV) from Tests/Support/desktop-requirements.txt"; \
	python3 -m venv --clear $(DESKTOP_VENV) \
	  || { echo "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 1; }; \
	$(DESKTOP_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r Tests/Support/desktop-requirements.txt \
	  && echo "$$key" > $(DESKTOP_VENV)/.requirements-stamp

# LemonLDAP::NG as an OpenID Connect provider (Tests/TokenCtlCLITests/LemonLDAPProviderTests.swift),
# set up by Tests/Support/lemonldap-ng-server.sh from Debian's packages: the suite runs
# directly, then through the agent. About 3 minutes (two waits for a 60 s token to expire).
.PHONY: test-lemonldap
test-lemonldap: build
	TOKENCTL_TEST_LEMONLDAP=1 $(KEYRING) $(SWIFT) test --skip-build --filter LemonLDAPProviderTests
	TOKENCTL_TEST_LEMONLDAP=1 $(KEYRING) Tests/Support/with-agent.sh $(SWIFT) test --skip-build \
	  --filter LemonLDAPProviderTests

# The hardening checks in full: 200 kills, every fault, the secret scan, and 1,000,000
# fuzz runs per target (about 20 minutes on 2 cores).
hardening: build auth-server-deps
	rm -f $(HARDENING)
	TOKENCTL_SOAK=1 HARDENING_SUMMARY=$(HARDENING) $(KEYRING) $(SWIFT) test --skip-build --filter '$(HARDENING_TESTS)'
	HARDENING_SUMMARY=$(HARDENING) $(KEYRING) $(CRASH_HARNESS) --kills 200
	FUZZ_SUMMARY=$(HARDENING) SWIFT=$(SWIFT) Tests/Fuzz/run.sh --runs 1000000
	Tests/Hardening/report.py $(HARDENING)

demo: deps auth-server-deps
	$(SWIFT) build
	$(KEYRING) Tests/Support/demo.sh .build/debug/tokenctl

# How the release executables are built, for `make install` and `make bench`, for the
# start-up time and peak memory of `tokenctl token` and the git helper (what each flag
# bought, measured: docs/performance.md, "The full program's start"):
# - --static-swift-stdlib: no Swift libraries to find and bind at start.
# - lld (-use-ld=lld) with -z pack-relative-relocs: the executable's relative relocations
#   packed (DT_RELR) instead of the RELA table the loader reads on every start (needs
#   glibc 2.36, Debian 12). gold, Swift's default linker, cannot pack them.
# - --no-export-dynamic: swiftc exports every symbol of our own objects so that other
#   images could bind to them; nothing does, and the loader searched them for every symbol
#   of the shared libraries. PIE, RELRO and the non-executable stack are unchanged.
# - --disable-local-rpath: SwiftPM adds RUNPATH $ORIGIN, which the loader searches before
#   the system's folders for every library, libcurl's dlopen included: a libcurl.so.4
#   beside the binary would run in a process holding tokens. The static Swift runtime
#   needs no run path; `make check-release` proves there is none.
# - Startup order: each function in a section of its own (-function-sections; the static
#   Swift runtime has them already) and the functions a client runs at start laid out
#   first, side by side (STARTUP_ORDER, `make startup-order`). A client the agent answers
#   runs a few hundred functions scattered over megabytes of code, and the kernel maps
#   64 KiB around each page it faults in, so scattered functions keep far more code
#   resident than they run. Names the code no longer has are skipped silently; `make
#   check-release` fails when too many are gone. The C targets too (-Xcc
#   -ffunction-sections): BoringSSL's FIPS module is one object, bcm.cc, and as one
#   section its code went wherever its SHA-256 (the lock file's name) was ordered.
#   Code no symbol names (LLVM's private functions), .init, .fini and the PLT go beside
#   the ordered functions (STARTUP_TEXT), for the same reason.
# - libstdc++ and libgcc's unwinder linked in, not loaded (STATIC_CXX): the Swift runtime
#   is their only user, and the loader's binding of libstdc++, libm and libgcc_s was most
#   of its work at each start of the full program. --static-swift-stdlib asks for them as
#   -lstdc++ and -lgcc_s; STATIC_CXX, searched first, holds the static archives under
#   those names (libgcc_eh.a is what gcc's -static-libgcc links). Their symbols stay
#   hidden (the runtime's --exclude-libs ALL), so a library loaded later that uses
#   libstdc++.so has its own. check-release proves neither is linked.
STARTUP_ORDER := Sources/tokenctl/startup.order
STARTUP_TEXT := Sources/tokenctl/startup-text.ld
STATIC_CXX := $(CURDIR)/.build/static-cxx
RELEASE_FLAGS := -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
  -Xlinker --no-export-dynamic -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
  -Xlinker --symbol-ordering-file=$(CURDIR)/$(STARTUP_ORDER) -Xlinker --no-warn-symbol-ordering -Xlinker -T -Xlinker $(CURDIR)/$(STARTUP_TEXT) \
  -Xlinker -L$(STATIC_CXX)

# The static archives, from the C++ compiler beside swift (the toolchain's clang, found
# through any link to swift on the PATH), under the names the link asks for.
SWIFT_CLANG := $(dir $(realpath $(shell command -v $(SWIFT) 2>/dev/null)))clang
.PHONY: static-cxx
static-cxx: deps
	@mkdir -p $(STATIC_CXX)
	@for pair in libstdc++.a:libstdc++.a libgcc_eh.a:libgcc_s.a; do \
	  archive=$$($(SWIFT_CLANG) -print-file-name=$${pair%%:*}); \
	  case $$archive in /*) ;; *) echo "make: $${pair%%:*} not found: apt-get install libstdc++-12-dev libgcc-12-dev" >&2; exit 1;; esac; \
	  ln -sf $$archive $(STATIC_CXX)/$${pair#*:} || exit 1; \
	done

# The benchmarks of the release build against their baselines (Tests/Benchmarks/bench.py),
# in a throw-away keyring, with the test authorization servers; prints a Markdown table.
# BENCH_ARGS="--quick" for a short try, "--only 1,5" for some rows, "--before-bin DIR" to
# time the direct path against release binaries from before the agent (row 10). The rows
# through the agent start and stop a `tokenctl agent` of their own.
BENCH_ARGS ?=
bench: bench-deps auth-server-deps static-cxx
	TOKENCTL_STATIC_PIE=1 $(SWIFT) build $(RELEASE_FLAGS)
	$(KEYRING) python3 Tests/Benchmarks/bench.py --bin .build/release $(BENCH_ARGS)

# Regenerates $(STARTUP_ORDER) from callgrind runs of the release clients, through an agent
# and on the direct path, in a throw-away keyring (Tests/Support/generate-startup-order.py);
# the executables are linked again with it. Run it when `make check-release` says to.
startup-order: bench-deps static-cxx
	TOKENCTL_STATIC_PIE=1 $(SWIFT) build $(RELEASE_FLAGS)
	$(KEYRING) Tests/Support/generate-startup-order.py .build/release $(STARTUP_ORDER)
	rm -f $(RELEASE_BINARIES) $(FRONT_END)
	TOKENCTL_STATIC_PIE=1 $(SWIFT) build $(RELEASE_FLAGS)

# libFuzzer over every parser of untrusted input (Tests/Fuzz/run.sh): 1,000,000 runs per
# target, or 20,000 for CI. A crash fails the target and names its reproducer. The
# sanitizer and libFuzzer runtimes come with the Swift toolchain; deps brings libcurl.
fuzz: deps
	SWIFT=$(SWIFT) Tests/Fuzz/run.sh --runs 1000000

fuzz-short: deps
	SWIFT=$(SWIFT) Tests/Fuzz/run.sh --runs 20000

# Regenerates man/ from the command definitions (the hand-written pages are left alone).
# The generated pages are the ones marked so on their first line; those of commands that
# are gone, or of names from before, go first.
GENERATED_MAN = $(shell grep -l '^\.\\" "Generated by swift-argument-parser"' man/*.1)
man: deps
	rm -f $(GENERATED_MAN)
	Tests/Support/generate-man.sh $(MAN_DATE) man

# Fails when the checked-in pages differ from what the command definitions produce.
check-man: deps
	@tmp=$$(mktemp -d) && Tests/Support/generate-man.sh $(MAN_DATE) $$tmp \
	  && for page in $$tmp/* $(GENERATED_MAN); do \
	       diff -u man/$$(basename $$page) $$tmp/$$(basename $$page) || { echo "man/ is out of date: run 'make man'"; rm -rf $$tmp; exit 1; }; \
	     done; rm -rf $$tmp

# The front end's copy of `tokenctl --help` (RootHelp, which it prints without the full
# program), from the debug build's full program; run it when the help changes.
FRONT_END_HELP := Sources/AgentFrontEnd/RootHelp+Text.swift
.PHONY: front-end-help check-front-end-help
front-end-help:
	$(SWIFT) build --product tokenctl
	Tests/Support/generate-front-end-help.sh .build/debug/tokenctl $(FRONT_END_HELP)

# Fails when that copy differs from what the debug build's full program prints.
check-front-end-help: $(TEST_PREREQS)
	@tmp=$$(mktemp); Tests/Support/generate-front-end-help.sh .build/debug/tokenctl $$tmp && diff -u $(FRONT_END_HELP) $$tmp; \
	  status=$$?; rm -f $$tmp; \
	  if [ $$status != 0 ]; then echo "$(FRONT_END_HELP) is out of date: run 'make front-end-help'"; fi; \
	  exit $$status

# Fails when Sources/CLibSecret's declarations of libsecret and GLib differ from Debian's
# headers: a difference would build, and then corrupt memory at run time.
check-libsecret: deps
	Tests/Support/check-libsecret-declarations.sh

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Plugins Examples Tests

# The agent's systemd user units (tokenctl-agent(1)), made from their templates with
# @BINDIR@ replaced: $(call write-units,BINDIR,OUTDIR).
SYSTEMD_UNITS := tokenctl-agent.socket tokenctl-agent.service
define write-units
mkdir -p $(2) && for unit in $(SYSTEMD_UNITS); do \
  sed 's|@BINDIR@|$(1)|g' Sources/tokenctl/systemd/$$unit.in > $(2)/$$unit || exit 1; \
  if grep -n '@[A-Z_]*@' $(2)/$$unit; then echo "$(2)/$$unit: a placeholder is left"; exit 1; fi; \
done
endef

# The units as `make install` writes them, checked by systemd-analyze against the debug
# build (which must exist: `make build`); a throw-away runtime folder stands in for the
# user manager's.
check-units: deps
	@tmp=$$(mktemp -d) && chmod 700 $$tmp \
	  && $(call write-units,$(CURDIR)/.build/debug,$$tmp/units) \
	  && XDG_RUNTIME_DIR=$$tmp systemd-analyze --user --man=no verify $(addprefix $$tmp/units/,$(SYSTEMD_UNITS)); \
	  status=$$?; rm -rf $$tmp; \
	  if [ $$status = 0 ]; then echo "systemd units: ok"; else echo "systemd units: systemd-analyze verify failed"; fi; \
	  exit $$status

# The release executables, built as `make install` builds them, checked with readelf: no
# run path, PIE, RELRO, no executable stack (Tests/Support/check-release-binaries.sh).
HELPERS := git-credential-tokenctl docker-credential-tokenctl
FRONT_END := .build/release/tokenctl-front-end
# The agent's own executable (Sources/tokenctl-agent), which `tokenctl agent run` runs; the
# startup order is the clients', none of whose functions it has.
AGENT := .build/release/tokenctl-agent
RELEASE_BINARIES := .build/release/tokenctl $(addprefix .build/release/,$(HELPERS))
check-release: deps static-cxx
	TOKENCTL_STATIC_PIE=1 $(SWIFT) build $(RELEASE_FLAGS) --product tokenctl
	for helper in $(HELPERS) tokenctl-front-end tokenctl-agent; do TOKENCTL_STATIC_PIE=1 $(SWIFT) build $(RELEASE_FLAGS) --product $$helper || exit 1; done
	Tests/Support/check-release-binaries.sh --static $(FRONT_END) --startup-order $(STARTUP_ORDER) $(RELEASE_BINARIES)
	Tests/Support/check-release-binaries.sh $(AGENT)

# `make install` into a scratch folder, and the installed programs run: the front end under
# each name finds the full program in libexec (Tests/Support/check-install.sh).
check-install: check-release
	Tests/Support/check-install.sh

# The man pages include tokenctl-agent(1); the agent's units and D-Bus service file name $(BINDIR)/tokenctl.
# What users run, `tokenctl` and the helpers, is the front end (Sources/tokenctl-front-end),
# under each name; the full program is $(LIBEXECDIR)/tokenctl, which the front end runs, and
# the agent $(LIBEXECDIR)/tokenctl-agent beside it, which `tokenctl agent run` runs.
install: check-release
	install -D -m 755 .build/release/tokenctl $(DESTDIR)$(LIBEXECDIR)/tokenctl
	install -D -m 755 $(AGENT) $(DESTDIR)$(LIBEXECDIR)/tokenctl-agent
	install -D -m 755 $(FRONT_END) $(DESTDIR)$(BINDIR)/tokenctl
	for helper in $(HELPERS); do ln -f $(DESTDIR)$(BINDIR)/tokenctl $(DESTDIR)$(BINDIR)/$$helper || exit 1; done
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	$(call write-units,$(BINDIR),.build/systemd)
	install -d $(DESTDIR)$(SYSTEMD_USER_DIR)
	install -m 644 $(addprefix .build/systemd/,$(SYSTEMD_UNITS)) $(DESTDIR)$(SYSTEMD_USER_DIR)/
	# Fast by default: the socket is enabled for every user session, as Debian's
	# gnupg enables gpg-agent.socket; a user turns it off with `systemctl --user mask`.
	if [ "$(ENABLE_USER_SOCKET)" = yes ]; then \
	  install -d $(DESTDIR)$(SYSTEMD_USER_DIR)/sockets.target.wants \
	  && ln -sf ../tokenctl-agent.socket $(DESTDIR)$(SYSTEMD_USER_DIR)/sockets.target.wants/tokenctl-agent.socket; \
	fi
	install -d $(DESTDIR)$(PREFIX)/share/dbus-1/services $(DESTDIR)$(PREFIX)/share/dbus-1/interfaces
	sed 's|@BINDIR@|$(BINDIR)|g' Sources/tokenctl/dbus/org.tokenctl.Agent.service.in \
	  > $(DESTDIR)$(PREFIX)/share/dbus-1/services/org.tokenctl.Agent.service
	install -m 644 Sources/tokenctl/dbus/org.tokenctl.Agent1.xml $(DESTDIR)$(PREFIX)/share/dbus-1/interfaces/
	@$(MAKE) --no-print-directory install-completions BINARY=.build/release/tokenctl
	@if [ "$(ENABLE_USER_SOCKET)" = yes ]; then \
	  echo "The agent's socket starts with every systemd user session from the next login; for this one:"; \
	  echo "  systemctl --user daemon-reload && systemctl --user start tokenctl-agent.socket"; \
	fi

# The Debian packages, tokenctl and python3-keyring-tokenctl, built from debian/ with
# dpkg-buildpackage (see docs/packaging.md); the build needs Swift on PATH but the
# packages do not. dpkg-buildpackage writes beside the checkout: what it wrote (listed in
# the .changes file) is moved to $(DEB_DIR).
DEB_DIR := .build/deb
DEB_PACKAGES := debhelper dh-python pybuild-plugin-pyproject python3-all python3-setuptools python3-keyring lintian devscripts libcurl4-openssl-dev libstdc++-12-dev libgcc-12-dev binutils
.PHONY: deb check-deb
deb:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"
	dpkg-buildpackage -b -us -uc --post-clean
	@changes=../tokenctl_$$(dpkg-parsechangelog -S Version)_$$(dpkg-architecture -q DEB_HOST_ARCH).changes; \
	  mkdir -p $(DEB_DIR) && dcmd mv $$changes $(DEB_DIR)/ && echo "Debian packages in $(DEB_DIR):" && dcmd --deb ls $(DEB_DIR)/$$(basename $$changes)

# Builds the packages, runs lintian on them, installs them where the Swift toolchain is
# hidden and uses them as a fresh user would, upgrades from one version to the next, and
# purges them (Tests/Support/check-deb.sh). Runs as root; leaves the system as it was.
check-deb: auth-server-deps
	Tests/Support/check-deb.sh

# The shell completion scripts, as BINARY writes them (swift-argument-parser generates them
# from the command definitions; see docs/usage.md, "Shell completion"). `make install` runs this
# with the release build; the tests run it with the debug build.
BINARY ?= .build/release/tokenctl
install-completions:
	mkdir -p .build/completions
	$(BINARY) --generate-completion-script bash > .build/completions/tokenctl.bash
	$(BINARY) --generate-completion-script zsh > .build/completions/_tokenctl
	$(BINARY) --generate-completion-script fish > .build/completions/tokenctl.fish
	install -D -m 644 .build/completions/tokenctl.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/tokenctl
	install -D -m 644 .build/completions/_tokenctl $(DESTDIR)$(ZSH_COMPLETION_DIR)/_tokenctl
	install -D -m 644 .build/completions/tokenctl.fish $(DESTDIR)$(FISH_COMPLETION_DIR)/tokenctl.fish

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

# The Python keyring backend's test environment (Tests/TokenCtlCLITests/Integration/
# KeyringBackendTests.swift): keyring from PyPI and Python/keyring-tokenctl, installed as a
# user installs them, so that pip finds the backend through its entry point, and uv, which
# asks keyring's command line. Debian's Mercurial runs on the system's Python with
# Debian's keyring (mercurial-keyring): the backend alone goes in $(KEYRING_SYSTEM_SITE),
# which its tests put on PYTHONPATH, as `pip install --user` puts it on that Python's path
# (MercurialKeyringTests.swift). Made again when the backend, its pyproject.toml or the
# Python version change.
KEYRING_VENV := .build-python/keyring
KEYRING_SYSTEM_SITE := $(KEYRING_VENV)/system-site
keyring-backend-deps:
	@key="$$(python3 -c 'import sys; print(sys.version)' | tr -d '\n') $$(cat Python/keyring-tokenctl/pyproject.toml Python/keyring-tokenctl/*.py | sha256sum | cut -d' ' -f1)"; \
	if [ -x $(KEYRING_VENV)/bin/python ] && [ "$$(cat $(KEYRING_VENV)/.stamp 2>/dev/null)" = "$$key" ]; then exit 0; fi; \
	echo "Creating $(KEYRING_VENV) with keyring and Python/keyring-tokenctl"; \
	rm -f $(KEYRING_VENV)/.stamp; \
	python3 -m venv --clear $(KEYRING_VENV) \
	  || { echo "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 1; }; \
	$(KEYRING_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-input ./Python/keyring-tokenctl uv \
	  && $(KEYRING_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
	       --target $(KEYRING_SYSTEM_SITE) ./Python/keyring-tokenctl \
	  && echo "$$key" > $(KEYRING_VENV)/.stamp

clean:
	rm -rf .build .build-fuzz
