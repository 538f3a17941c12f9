#!/usr/bin/env bash
# Checks the shape CONTRIBUTING.md asks of the sources: prints every Swift file under
# Sources/ over 400 lines and every function, initializer or accessor over 60, and exits 1
# if it printed any.
#
#   scripts/check-shape.sh [PACKAGE_DIR]     # PACKAGE_DIR defaults to this package
#
# Lengths come from the compiler's parser (swiftc -dump-parse): a declaration runs from its
# first line to the line of its closing brace, whatever comments and strings it holds.
set -euo pipefail
package="${1:-$(dirname "$0")/..}"
cd "$package"
max_file_lines=400
max_function_lines=60

files=()
while IFS= read -r f; do files+=("$f"); done < <(find Sources -name '*.swift' | LC_ALL=C sort)
if [ ${#files[@]} -eq 0 ]; then
    echo "check-shape.sh: no Swift files under $PWD/Sources" >&2
    exit 2
fi
ast=$(mktemp)
trap 'rm -f "$ast"' EXIT
# One frontend process a module parses all its files: the whole check takes about a second,
# where a swiftc per file takes 15. (One for all modules would see two main.swift files.)
for module in Sources/*/; do
    primaries=()
    for f in "${files[@]}"; do [[ $f == "$module"* ]] && primaries+=(-primary-file "$f"); done
    [ ${#primaries[@]} -eq 0 ] && continue
    if ! swiftc -frontend -dump-parse "${primaries[@]}" >>"$ast" 2>&1; then
        echo "check-shape.sh: swiftc could not parse $module:" >&2
        swiftc -frontend -dump-parse "${primaries[@]}" 2>&1 >/dev/null | grep -a "error:" >&2 || true
        exit 2
    fi
done

# "file path lines" for each file, then "function path first last name" for each function,
# initializer and accessor (an accessor is named property.kind, as in title.get).
{
    wc -l "${files[@]}" | awk '$2 != "total" { print "file", $2, $1 }'
    grep -aE '^\s*\((func_decl|constructor_decl|accessor_decl) ' "$ast" | sed -nE \
        -e 's/.* range=\[([^:]+):([0-9]+):[0-9]+ - line:([0-9]+):[0-9]+\] "([^"]*)".*/function \1 \2 \3 \4/p' \
        -e 's/.* range=\[([^:]+):([0-9]+):[0-9]+ - line:([0-9]+):[0-9]+\] <anonymous[^>]*> ([A-Za-z_]+) for="([^"]*)".*/function \1 \2 \3 \5.\4/p'
} | awk -v max_file="$max_file_lines" -v max_function="$max_function_lines" '
    $1 == "file" && $3 > max_file {
        printf "%s: %d lines (at most %d)\n", $2, $3, max_file
        found = 1
    }
    $1 == "function" && $4 - $3 + 1 > max_function {
        printf "%s:%d: %s is %d lines (at most %d)\n", $2, $3, $5, $4 - $3 + 1, max_function
        found = 1
    }
    END { exit found }'
