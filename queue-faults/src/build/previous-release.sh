#!/usr/bin/env bash
# Builds the pgqueue libraries (queue-core, queue-autoconfigure, queue-spring-boot-starter) of an
# earlier commit of this repository, for the scenario that upgrades nodes of the previous release to
# this one. The fault worker's jar with these libraries in place of its own is the previous
# release's node.
#
#   previous-release.sh <commit> <output directory> offline=<true|false>
#
# The libraries land in <output directory>/<commit>/; a second run with the same commit does nothing.
# When the commit is not in this clone (no git, a shallow clone), the file <output directory>/unavailable
# says so and the scenario is skipped with that reason; a build that fails fails the build.
set -euo pipefail
commit="$1"
out="$2"
offline="$3"
libs="$out/$commit"
[ -f "$libs/built" ] && exit 0
rm -rf "$out"
mkdir -p "$out"
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1 \
    || ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "the previous release's commit $commit is not in this clone (no git, or a shallow clone)" > "$out/unavailable"
  echo "[pgqueue] $(cat "$out/unavailable"): the upgrade scenario will be skipped"
  exit 0
fi
echo "[pgqueue] Building the previous release's libraries from $commit"
source="$out/source"
mkdir -p "$source"
git -C "$(git rev-parse --show-toplevel)" archive "$commit" | tar -x -C "$source"
flags=(-q -B package -pl queue-spring-boot-starter -am -DskipTests)
[ "$offline" = offline=true ] && flags+=(-o)
if ! (cd "$source" && unset MAVEN_PROJECTBASEDIR MAVEN_BASEDIR && ./mvnw "${flags[@]}") > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  echo "[pgqueue] The previous release's build failed (whole log: $out/build.log)"
  exit 1
fi
mkdir -p "$libs"
for module in queue-core queue-autoconfigure queue-spring-boot-starter; do
  cp "$source/$module/target/$module-"*.jar "$libs/"
done
rm -f "$libs"/*-tests.jar "$libs"/*-sources.jar "$libs"/*-javadoc.jar
rm -rf "$source"
touch "$libs/built"
