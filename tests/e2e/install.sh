#!/usr/bin/env bash
# tests/e2e/install.sh - make install DESTDIR=... puts ember, a man page per
# command (and ember.1) and the bash completion under PREFIX, each usable;
# make uninstall takes exactly those away.  Installs the binary under test
# (INSTALL_BIN), so nothing is rebuilt.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"
TOPDIR=$(cd "$(dirname "$0")/../.." && pwd)
DEST=$TMP/dest PREFIX=/usr/local

if ! make -s -C "$TOPDIR" install DESTDIR="$DEST" PREFIX=$PREFIX INSTALL_BIN="$EMBER" \
	>"$TMP/install.out" 2>&1; then
	fail install "make install: $(tail -c 300 "$TMP/install.out")"
	exit 0
fi
(cd "$DEST" && find . -type f | sort) >"$TMP/files"
want_files() {
	echo "./usr/local/bin/ember"
	echo "./usr/local/share/bash-completion/completions/ember"
	echo "./usr/local/share/man/man1/ember.1"
	for c in $("$EMBER" --list-commands); do echo "./usr/local/share/man/man1/ember-$c.1"; done
}
want_files | sort >"$TMP/want"
if cmp -s "$TMP/files" "$TMP/want"; then pass install-files
else fail install-files "installed vs wanted: $(diff "$TMP/files" "$TMP/want" | tr '\n' ' ' | head -c 400)"; fi

if "$DEST$PREFIX/bin/ember" --version | grep -q '^ember '; then pass installed-binary-runs
else fail installed-binary-runs "$DEST$PREFIX/bin/ember --version failed"; fi

if command -v man >/dev/null 2>&1; then
	if MANWIDTH=80 man -l "$DEST$PREFIX/share/man/man1/ember-report.1" 2>&1 | grep -q -- '--no-inline'; then
		pass man-page-renders
	else fail man-page-renders "man -l ember-report.1 does not show --no-inline"; fi
else
	skip man-page-renders "no man command here"
fi

# The completion offers the table's options: 'ember report --no-i<TAB>'.
got=$(PATH="$DEST$PREFIX/bin:$PATH" bash -c '
	. "$1"
	COMP_WORDS=(ember report --no-i); COMP_CWORD=2
	_ember; printf "%s\n" "${COMPREPLY[@]}"' _ "$DEST$PREFIX/share/bash-completion/completions/ember")
if [ "$got" = "--no-inline" ]; then pass completion-options
else fail completion-options "completing 'ember report --no-i' gave: $got"; fi
got=$(PATH="$DEST$PREFIX/bin:$PATH" bash -c '
	. "$1"
	COMP_WORDS=(ember fla); COMP_CWORD=1
	_ember; printf "%s\n" "${COMPREPLY[@]}"' _ "$DEST$PREFIX/share/bash-completion/completions/ember")
if [ "$got" = "flame" ]; then pass completion-commands
else fail completion-commands "completing 'ember fla' gave: $got"; fi

if ! make -s -C "$TOPDIR" uninstall DESTDIR="$DEST" PREFIX=$PREFIX >"$TMP/uninstall.out" 2>&1; then
	fail uninstall "make uninstall: $(tail -c 300 "$TMP/uninstall.out")"
	exit 0
fi
left=$(cd "$DEST" && find . -type f)
if [ -z "$left" ]; then pass uninstall-removes-all
else fail uninstall-removes-all "left behind: $(echo $left)"; fi
