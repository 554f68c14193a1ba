#!/usr/bin/env bash
# extract.sh copies the third-party, public-domain or BSD-licensed texts of
# the token corpus into internal/tokenfit/accuracy/testdata/corpus. It was
# run once; its output is checked in, so nothing needs to run it again. Sources and licences
# are listed in internal/tokenfit/accuracy/testdata/corpus/README.md.
#
# Needs: a Go toolchain (GOROOT sources), golang.org/x/text v0.40.0 in the
# module cache (a dependency of this module), and the Debian packages
# sword-text-sparv and diatheke for the Reina-Valera 1909 Spanish text.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=internal/tokenfit/accuracy/testdata/corpus
root=$(go env GOROOT)/src
xtext=$(go env GOMODCACHE)/golang.org/x/text@v0.40.0/encoding/testdata

# English prose: Newton's Opticks (public domain), from the Go distribution.
sed -n '9,3200p' "$root/testdata/Isaac.Newton-Opticks.txt" > "$out/prose_en.opticks.txt"

# English technical prose: doc comments of Go standard-library packages (BSD).
for f in net/http/server.go net/http/request.go context/context.go io/io.go \
	sync/mutex.go sync/waitgroup.go os/file.go fmt/doc.go encoding/json/encode.go \
	time/time.go bufio/bufio.go strings/builder.go sort/sort.go errors/wrap.go; do
	awk '/^[ \t]*\/\/ ?[^-+go:]/ { sub(/^[ \t]*\/\/ ?/, ""); line = line (line == "" ? "" : " ") $0; next }
	     { if (line != "") { print line; print ""; line = "" } }' "$root/$f"
done | awk 'length($0) == 0 || length($0) > 40' | cat -s > "$out/prose_en.godoc.txt"

# Go source code (BSD).
for f in strings/strings.go bufio/bufio.go net/http/cookie.go encoding/csv/reader.go \
	sort/slice.go container/list/list.go text/tabwriter/tabwriter.go path/filepath/match.go; do
	cat "$root/$f"
done > "$out/code_go.stdlib.txt"

# French prose: Voltaire, Candide (public domain), from golang.org/x/text testdata.
sed -n '4,$p' "$xtext/candide-utf-8.txt" > "$out/prose_fr.candide.txt"
# Japanese prose: Akutagawa, Rashomon (public domain).
sed -n '4,$p' "$xtext/rashomon-utf-8.txt" > "$out/ja.rashomon.txt"
# Chinese: Sun Tzu, The Art of War, simplified (public domain).
sed -n '5,$p' "$xtext/sunzi-bingfa-simplified-utf-8.txt" > "$out/zh.sunzi.txt"

# Spanish prose: Reina-Valera 1909 (public domain), through the SWORD module.
for k in "Proverbs 1-12" "Luke 1-10" "Acts 1-8"; do
	diatheke -b spaRV1909eb -f plain -o "" -k "$k" | grep -v '^(spaRV1909eb)' |
		sed -E 's/^[1-3]? ?[A-Za-z]+ [0-9]+:[0-9]+: //'
done | awk '{ para = para (para == "" ? "" : " ") $0; if (NR % 6 == 0) { print para; print ""; para = "" } }
	END { if (para != "") print para }' > "$out/prose_es.rv1909.txt"

# French man page, rendered to plain text: man(1) unwraps each paragraph to
# one line (MANWIDTH), col -b drops overstrikes, and the header, footer and
# indentation are cut. Needs the Debian packages man-db and xz-utils (French
# xz(1), public domain).
render() {
	zcat "$1" | MANWIDTH=2000 LANG=C.UTF-8 man -l - 2>/dev/null | col -bx | sed -E '1d;$d' |
		sed -E 's/^ +//; s/ +$//' | cat -s
}
# The French xz(1) leaves some paragraphs in English: drop those (three or
# more English function words and no accented letter), and keep the first 40 KB or so.
render /usr/share/man/fr/man1/xz.1.gz | awk -v RS= -v ORS='\n\n' '
	{ n = 0; t = " " tolower($0) " "
	  n += gsub(/ (the|is|and|of|to|are|with|be|that|this|for|not|used) /, "&", t)
	  if (n >= 3 && $0 !~ /[éèàêç]/) next
	  if ((size += length($0) + 2) > 40000) next
	  print }' | sed -e '$d' > "$out/prose_fr.xz.txt"
