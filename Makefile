# queueplayerd: the two commands are `make run` and `make test`.
SWIFT        ?= swift
MEDIA        ?= Media
OUTPUT       ?= auto
PREFIX       ?= $(HOME)/.local
DESTDIR      ?=

.PHONY: all bootstrap build run test bench clean

all: build

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

## Installs what is missing, builds, and plays Media/ through the default output.
run: build
	$(SWIFT) run queueplayerd --media $(MEDIA) --output $(OUTPUT)

## Installs what is missing, builds, and runs every test (unit and integration).
test: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel

clean:
	rm -rf .build
