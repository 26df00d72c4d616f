# queueplayerd: the two commands are `make run` and `make test`.
SWIFT        ?= swift
MEDIA        ?= Media
OUTPUT       ?= auto
# Where `make run` serves the web page and the WebSocket API (docs/websocket.md); `off` for none.
HTTP         ?= 127.0.0.1:6680
PREFIX       ?= $(HOME)/.local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
UNITDIR      ?= $(HOME)/.config/systemd/user
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
DOCDIR       ?= $(DATADIR)/doc/queueplayerd
# Where each shell looks for completions: bash-completion's completionsdir (it also looks under
# $XDG_DATA_HOME, ~/.local/share), zsh's site-functions (in zsh's fpath under /usr/local; under
# ~/.local add ~/.local/share/zsh/site-functions to fpath; Debian's zsh package: vendor-completions),
# fish's vendor_completions.d (it also looks under $XDG_DATA_HOME).
BASHCOMPDIR  ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR   ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR  ?= $(DATADIR)/fish/vendor_completions.d
# A binary to install instead of a fresh release build (e.g. BINARY=.build/debug/queueplayerd).
BINARY       ?=
# Extra arguments for scripts/run-tests (e.g. TESTFLAGS="--filter StateRestoreTests", "--jobs 1").
TESTFLAGS    ?=

.PHONY: all bootstrap build run test test-fast bench clean man docs

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Installs what is missing, builds, and plays Media/ through the default output; the web page is
## at http://$(HTTP)/.
run: build
	$(SWIFT) run queueplayerd --media $(MEDIA) --output $(OUTPUT) --http $(HTTP)

## Installs what is missing, builds, and runs every test (unit and integration), four test
## processes at once, each serial inside (scripts/run-tests deals the suites between them by
## their durations, scripts/test-durations.tsv). Each process runs with a scratch HOME and XDG
## directories (made by the script, removed after): nothing the tests do reads or writes the
## user's own saved state, control socket or settings. On failure, what failed is repeated at
## the end (CI shows only the tail of a long log). TESTFLAGS="--filter REGEX" runs part of it;
## `make test-fast` runs the in-process targets only (the edit loop, five processes, about a minute).
test: bootstrap
	$(SWIFT) build --build-tests
	scripts/run-tests $(TESTFLAGS)

test-fast: bootstrap
	$(SWIFT) build --build-tests
	scripts/run-tests --fast $(TESTFLAGS)

clean:
	rm -rf .build

## Writes the documents made from the settings' declarations (Sources/DaemonCore/Configuration/
## Settings.swift): the man pages docs/man/queueplayerd.1 and queueplayerd.toml.5, docs/settings.md
## and docs/examples/queueplayerd.toml. They are committed; a test fails when they are stale.
DOCUMENTS := docs/man/queueplayerd.1 docs/man/queueplayerd.toml.5 docs/settings.md docs/examples/queueplayerd.toml
man docs: build
	@mkdir -p docs/man docs/examples
	@bin="$$($(SWIFT) build --show-bin-path)"; for file in $(DOCUMENTS); do \
	  "$$bin/queueplayerd" --print-document "$$(basename $$file)" > "$$file.tmp" && mv "$$file.tmp" "$$file" || exit 1; \
	  echo "wrote $$file"; done

## Benchmarks side by side with mpg123 and mpd (about 75 minutes): bench/results/latest.md.
bench:
	bench/run

.PHONY: install uninstall completions deb release release-floor text-order

# The release binary carries the Swift runtime and Foundation inside it (`--static-swift-stdlib`),
# so an installed daemon does not depend on the toolchain's directory. It is linked by lld with
# packed relative relocations (DT_RELR, glibc 2.36 or later) and without exporting its own symbols
# (the static runtime's link arguments export them; nothing looks them up): that leaves alsa-lib,
# libmpg123, libxml2, ICU's and the C/C++ runtimes' shared libraries, and cuts the resident
# memory the loader and the symbol tables took (docs/ARCHITECTURE.md, "Memory"; the figures are in
# bench/results/history.md).
#
# Every function is compiled into a section of its own, and the link puts the functions that
# start-up and playback enter first and together, in the order of scripts/text-order.txt.xz (made by
# scripts/text-order from a running daemon, unpacked into .build/): the executable's code is mapped
# in large blocks (page-cache folios, fault-around), so scattered hot functions kept most of its
# `.text` resident. The list only orders: a stale one costs memory, a missing one is not passed,
# neither fails the link. The compiler's private functions have no symbol for the list to name:
# scripts/private-functions.ld puts them all together, next to the ordered block.
TEXT_ORDER_XZ := $(CURDIR)/scripts/text-order.txt.xz
TEXT_ORDER := $(CURDIR)/.build/text-order.txt
TEXT_ORDER_DEPENDENCY := $(if $(wildcard $(TEXT_ORDER_XZ)),$(TEXT_ORDER))
RELEASE_SECTION_FLAGS := -c release --static-swift-stdlib \
  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic \
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcxx -ffunction-sections
PRIVATE_FUNCTIONS_LD := $(CURDIR)/scripts/private-functions.ld
RELEASE_LINK_FLAGS ?= $(RELEASE_SECTION_FLAGS) -Xlinker -T -Xlinker $(PRIVATE_FUNCTIONS_LD) \
  $(if $(TEXT_ORDER_DEPENDENCY),-Xlinker --symbol-ordering-file=$(TEXT_ORDER) -Xlinker --no-warn-symbol-ordering)
RELEASE_FLAGS ?= --product queueplayerd $(RELEASE_LINK_FLAGS)
# SwiftPM does not compile again what it built before the flags changed: a tree built before
# -function-sections kept its dependencies' objects with most functions in one `.text` (858 of
# NIOPosix's 965 in `Bootstrap.swift.o`), and `make bench` measured that. A release build whose
# compiler flags differ from the last one's therefore starts afresh (.build/release-flags). Link
# flags are left out: SwiftPM links again when they change, and nothing needs compiling.
RELEASE_FLAGS_CHECK = @flags='$(RELEASE_SECTION_FLAGS)'; \
  if [ -e .build/release ] && [ "$$(cat .build/release-flags 2>/dev/null)" != "$$flags" ]; then \
    echo "release flags changed: building the release configuration afresh"; \
    rm -rf "$$(readlink -f .build/release)" .build/release; fi; \
  mkdir -p .build && printf '%s' "$$flags" > .build/release-flags
# SwiftPM does not know the text order and the linker script are inputs of the link: a product
# older than either is removed, so that it is linked again.
RELINK_IF_OLDER = @for input in "$(TEXT_ORDER)" "$(PRIVATE_FUNCTIONS_LD)"; do \
  if [ -f "$$input" ] && [ "$$input" -nt "$(1)" ]; then rm -f "$(1)"; fi; done

## Builds the release binary, .build/release/queueplayerd (what `make install` and `make bench` use).
release: bootstrap $(TEXT_ORDER_DEPENDENCY)
	$(RELEASE_FLAGS_CHECK)
	$(call RELINK_IF_OLDER,.build/release/queueplayerd)
	$(SWIFT) build $(RELEASE_FLAGS)

## The bench's floors (bench/floor): a program linked as the release binary is, idle, playing a file or ticking.
release-floor: bootstrap $(TEXT_ORDER_DEPENDENCY)
	$(RELEASE_FLAGS_CHECK)
	$(call RELINK_IF_OLDER,.build/release/queueplayerd-floor)
	$(SWIFT) build --product queueplayerd-floor $(RELEASE_LINK_FLAGS)

$(TEXT_ORDER): $(TEXT_ORDER_XZ)
	@mkdir -p $(dir $@)
	xz -dc $< > $@.tmp && mv $@.tmp $@

## Remakes scripts/text-order.txt.xz (about 6 minutes; needs `scripts/bootstrap --bench`): a release
## build of its own in which every function starts a page (`-align-all-functions=12`), so that the
## pages scripts/text-order sees entered name the functions entered, not their neighbours (with the
## functions packed, about 1.6 times as many were listed, and the ordered block kept them resident).
TEXT_ORDER_BUILD := $(CURDIR)/.build/text-order-build
text-order: bootstrap
	$(SWIFT) build --scratch-path $(TEXT_ORDER_BUILD) --product queueplayerd $(RELEASE_SECTION_FLAGS) \
	  -Xswiftc -Xllvm -Xswiftc -align-all-functions=12 -Xcc -falign-functions=4096 -Xcxx -falign-functions=4096
	scripts/text-order $(TEXT_ORDER_BUILD)/release/queueplayerd $(TEXT_ORDER_XZ)

# What `make install` and `make deb` install beside the binary and the units: the man pages
# (docs/man, generated from the settings), the documentation, the licence and the example
# configuration.
MANPAGES       = $(wildcard docs/man/*.[1-8])
DOCIMAGES      = $(wildcard docs/images/*.png)
EXAMPLE_CONFIG = docs/examples/queueplayerd.toml
INSTALLED_BINARY = $(or $(BINARY),.build/release/queueplayerd)
COMPLETIONS    = .build/completions

## The shell completions of the binary to install (bash, zsh, fish), in $(COMPLETIONS)/, made
## from the settings' declarations (`--generate-completion-script`).
completions:
	@if [ -z "$(BINARY)" ]; then $(MAKE) --no-print-directory release || exit 1; fi
	@mkdir -p $(COMPLETIONS)
	@for shell in bash:queueplayerd zsh:_queueplayerd fish:queueplayerd.fish; do \
	  file=$(COMPLETIONS)/$${shell#*:}; echo "$(INSTALLED_BINARY) --generate-completion-script $${shell%%:*} > $$file"; \
	  "$(INSTALLED_BINARY)" --generate-completion-script $${shell%%:*} > $$file.$$$$ && mv $$file.$$$$ $$file || exit 1; done

## Builds for release and installs the daemon in $(BINDIR), its systemd user units in $(UNITDIR),
## the man pages, the shell completions, the documentation with the licence and the example
## configuration (BINARY=path installs an existing build instead).
install: completions
	install -d -m 0755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(BASHCOMPDIR)" \
	  "$(DESTDIR)$(ZSHCOMPDIR)" "$(DESTDIR)$(FISHCOMPDIR)" "$(DESTDIR)$(DOCDIR)/docs" "$(DESTDIR)$(DOCDIR)/examples"
	install -m 0755 "$(INSTALLED_BINARY)" "$(DESTDIR)$(BINDIR)/queueplayerd"
	sed 's|^ExecStart=%h/.local/bin/|ExecStart=$(if $(filter $(HOME)/.local/bin,$(BINDIR)),%h/.local/bin,$(BINDIR))/|' \
	  systemd/queueplayerd.service > "$(DESTDIR)$(UNITDIR)/queueplayerd.service"
	chmod 0644 "$(DESTDIR)$(UNITDIR)/queueplayerd.service"
	install -m 0644 systemd/queueplayerd.socket "$(DESTDIR)$(UNITDIR)/queueplayerd.socket"
	@for page in $(MANPAGES); do section=$${page##*.}; \
	  echo "install -m 0644 $$page $(DESTDIR)$(MANDIR)/man$$section/"; \
	  install -d -m 0755 "$(DESTDIR)$(MANDIR)/man$$section" && \
	  install -m 0644 "$$page" "$(DESTDIR)$(MANDIR)/man$$section/" || exit 1; done
	sed '1{/^#!/d}' $(COMPLETIONS)/queueplayerd > "$(DESTDIR)$(BASHCOMPDIR)/queueplayerd"   # sourced, not run: no #! line
	chmod 0644 "$(DESTDIR)$(BASHCOMPDIR)/queueplayerd"
	install -m 0644 $(COMPLETIONS)/_queueplayerd "$(DESTDIR)$(ZSHCOMPDIR)/_queueplayerd"
	install -m 0644 $(COMPLETIONS)/queueplayerd.fish "$(DESTDIR)$(FISHCOMPDIR)/queueplayerd.fish"
	install -m 0644 README.md LICENSE "$(DESTDIR)$(DOCDIR)/"
	install -m 0644 $(wildcard docs/*.md) "$(DESTDIR)$(DOCDIR)/docs/"
	$(if $(DOCIMAGES),install -d -m 0755 "$(DESTDIR)$(DOCDIR)/docs/images" && install -m 0644 $(DOCIMAGES) "$(DESTDIR)$(DOCDIR)/docs/images/")
	install -m 0644 $(EXAMPLE_CONFIG) "$(DESTDIR)$(DOCDIR)/examples/queueplayerd.toml"
	@echo "Then: systemctl --user daemon-reload && systemctl --user enable --now queueplayerd.socket"
	@echo "The example configuration: $(DOCDIR)/examples/queueplayerd.toml (copy it to ~/.config/queueplayerd/queueplayerd.toml)"

## Removes what `make install` installed (stop and disable the units first).
uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/queueplayerd" \
	  "$(DESTDIR)$(UNITDIR)/queueplayerd.service" "$(DESTDIR)$(UNITDIR)/queueplayerd.socket" \
	  "$(DESTDIR)$(BASHCOMPDIR)/queueplayerd" "$(DESTDIR)$(ZSHCOMPDIR)/_queueplayerd" \
	  "$(DESTDIR)$(FISHCOMPDIR)/queueplayerd.fish"
	@for page in $(MANPAGES); do name=$${page##*/}; section=$${page##*.}; \
	  echo "rm -f $(DESTDIR)$(MANDIR)/man$$section/$$name"; rm -f "$(DESTDIR)$(MANDIR)/man$$section/$$name"; done
	rm -rf "$(DESTDIR)$(DOCDIR)"

## A Debian package of the release binary for this machine's architecture, in .build/deb/
## (BINARY=.build/debug/queueplayerd packages the debug build instead, as `make test` does:
## scripts/make-deb says what differs). `Depends:` is computed by dpkg-shlibdeps from the
## libraries the binary links.
deb:
	@if [ -z "$(BINARY)" ]; then $(MAKE) --no-print-directory release || exit 1; fi
	scripts/make-deb "$(INSTALLED_BINARY)" .build/deb

.PHONY: fuzz check-sanitizers

FUZZ_SECONDS ?= 60

## Builds the libFuzzer targets (Fuzz/, a package of their own) and runs each for FUZZ_SECONDS
## from its committed seeds; new inputs and crashers go to .build/fuzz/ (see Fuzz/README.md).
fuzz: bootstrap
	cd Fuzz && $(SWIFT) build -Xswiftc -sanitize=fuzzer,address
	Fuzz/run-fuzzers $(FUZZ_SECONDS)

## Runs the unit tests (all but IntegrationTests) under ThreadSanitizer, then AddressSanitizer,
## each in a build directory of its own; fails if either fails. Toolchain leaks: Tests/lsan-suppressions.txt.
check-sanitizers: bootstrap
	@status=0; for run in thread:.build-tsan address:.build-asan; do \
	  set -- $$(echo $$run | tr : ' '); \
	  echo "$(SWIFT) test --sanitize=$$1 --scratch-path $$2 --no-parallel --skip IntegrationTests"; \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan-suppressions.txt \
	    $(SWIFT) test --sanitize=$$1 --scratch-path $$2 --no-parallel --skip IntegrationTests || status=1; \
	done; exit $$status
