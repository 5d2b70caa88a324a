#!/usr/bin/env bash
# Builds a libFuzzer target straight from replica's sources (swiftc -sanitize=fuzzer,address), so the
# package itself keeps no dependency, and runs it on its corpus (Fuzz/corpus/TARGET, kept in git: the
# inputs that found something stay as regression tests).
#
#   Fuzz/run.sh TARGET [LIBFUZZER OPTIONS…]     e.g. Fuzz/run.sh json -runs=1000000, -max_total_time=600
#   Fuzz/run.sh all -runs=2000                  every target, briefly (what CI runs)
#
# Targets: json, query, querystring, lines, display, import, extract, inputs (tool arguments, plugin lines,
# configuration files and record lines: the Replica module's parsers).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?name a target: json, query, querystring, lines, display, import, extract, inputs or all}
shift
if [[ $target == all ]]; then
    # Two targets at a time (FUZZ_JOBS to change it): each is one single-threaded compile of its own
    # (its shim folder, objects and binary are named after it), so two keep both cores busy. xargs exits
    # non-zero if any target did.
    printf '%s\n' json query querystring lines display import extract inputs | xargs -P "${FUZZ_JOBS:-2}" -I{} "$0" {} "$@"
    exit 0
fi
core=(Sources/ReplicaCore/*.swift)
# The text analyzer the index's words come from (and its C below).
text=(Sources/ReplicaText/*.swift)
case $target in
    json|lines|display) sources=("${core[@]}") ;;
    query) sources=("${core[@]}" "${text[@]}" Sources/ReplicaIndex/Search/FTSPattern.swift) ;;
    import|querystring)
        # The whole index module and its SQLite backend, with the migrations the backend's build plugin
        # generates (run swift build first).
        migrations=$(find .build -path "*outputs*ReplicaSQLiteStore*" -name EmbeddedMigrations.swift | head -1)
        [[ -n $migrations ]] || { echo "build the package first (swift build): the import target needs its generated migrations" >&2; exit 2; }
        mapfile -t index < <(find Sources/ReplicaIndex Sources/ReplicaSQLiteStore -name "*.swift" | sort)
        sources=("${core[@]}" "${text[@]}" "${index[@]}" Sources/ReplicaSQLite/*.swift "$migrations") ;;
    extract) sources=(Plugins/FileTree/Extraction/*.swift) ;;
    inputs)
        # Every module up to Replica (both index backends and the PostgreSQL home included), and the exec
        # plugin's message reader, compiled as one module.
        migrations=$(find .build -path "*outputs*ReplicaSQLiteStore*" -name EmbeddedMigrations.swift | head -1)
        [[ -n $migrations ]] || { echo "build the package first (swift build): the inputs target needs its generated migrations" >&2; exit 2; }
        mapfile -t modules < <(find Sources/ReplicaIndex Sources/ReplicaSQLiteStore Sources/ReplicaEmbedding Sources/Replica \
            Sources/ReplicaPostgres Sources/ReplicaPostgresStore Sources/ReplicaPostgresHome -name "*.swift" ! -name Exports.swift | sort)
        sources=("${core[@]}" "${text[@]}" "${modules[@]}" Sources/ReplicaSQLite/*.swift "$migrations" Plugins/Exec/PluginMessage.swift) ;;
    *) echo "unknown target '$target'" >&2; exit 2 ;;
esac
build=.build/fuzz
mkdir -p "$build" "Fuzz/corpus/$target"
# The C targets the sources use are compiled with the toolchain's own clang and linked in: each file of
# DIR, with the extra flags given.
objects=()
# Whether a source file's path matches PATTERN. (A loop, not printf into grep -q: grep -q leaves at its first
# match, and printf, still writing the long lists, dies of SIGPIPE, which pipefail turns into "no match".)
uses() {
    local file
    for file in "${sources[@]}"; do
        [[ $file =~ $1 ]] && return 0
    done
    return 1
}
compile_c() {
    local dir=$1 file object compiler
    shift
    for file in "$dir"/*.c "$dir"/*.cpp; do
        [[ -e $file ]] || continue
        object=$build/$(basename "${file%.*}")-$target.o
        compiler=clang
        [[ $file == *.cpp ]] && compiler=clang++
        "$(dirname "$(command -v swiftc)")/$compiler" -O2 -fsanitize=address -I "$dir/include" "$@" -c "$file" -o "$object"
        objects+=("$object")
    done
}
# The index module's vector scan and the encoder's int8 products.
if uses '^Sources/(ReplicaIndex|ReplicaSQLiteStore|ReplicaEmbedding)/'; then
    compile_c Sources/CVectorKernels
fi
# The text analyzer (CAnalyzer, on ICU, Snowball and CLD2), which SQLite's connections also register as
# FTS5's tokenizer.
if uses '^Sources/(ReplicaSQLite|ReplicaText)/'; then
    compile_c Sources/CAnalyzer
    objects+=(-licuuc -licui18n -lstemmer -lcld2 -lstdc++ -lsqlite3)
fi
# The library starts children through a C supervisor (CSpawn).
if uses '^Sources/Replica/Processes/'; then
    compile_c Sources/CSpawn -D_GNU_SOURCE
fi
# The sources' own imports of ReplicaCore name a module that is compiled in here with them.
shim=$build/shim-$target
rm -rf "$shim"
mkdir -p "$shim"
for file in "${sources[@]}" "Fuzz/targets/$target.swift"; do
    sed -E -e '/^(@_exported |public |package |internal )?import Replica[A-Za-z]*$/d' "$file" > "$shim/$(basename "$file")"
done
swiftc -O -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name replica -module-name ReplicaFuzz \
    -Xcc -fmodule-map-file=Sources/CSQLite/module.modulemap -I Sources/CSQLite -lsqlite3 \
    -Xcc -fmodule-map-file=Sources/CSpawn/include/module.modulemap -I Sources/CSpawn/include \
    -Xcc -fmodule-map-file=Sources/COpenBLAS/module.modulemap -I Sources/COpenBLAS \
    -Xcc -fmodule-map-file=Sources/CVectorKernels/include/module.modulemap -I Sources/CVectorKernels/include \
    -Xcc -fmodule-map-file=Sources/CAnalyzer/include/module.modulemap -I Sources/CAnalyzer/include \
    -Xcc -fmodule-map-file=Sources/CPostgres/module.modulemap -I Sources/CPostgres -Xcc -I/usr/include/postgresql -lpq \
    "$shim"/*.swift "${objects[@]}" -o "$build/fuzz-$target" 2> >(grep -v "ld.gold: warning" >&2)
log=$build/fuzz-$target.log
status=0
"$build/fuzz-$target" "Fuzz/corpus/$target" "$@" > "$log" 2>&1 || status=$?
grep -E "DONE|ERROR|SUMMARY|crash-|Fatal error|failed" "$log" | sed "s/^/$target: /" || true
if ((status != 0)); then
    echo "$target: the fuzzer stopped with status $status (the log is $log; the input that did it is named above)" >&2
    exit "$status"
fi
