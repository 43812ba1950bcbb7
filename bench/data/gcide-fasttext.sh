#!/usr/bin/env bash
# Builds gcide-fasttext-100: real 100-d text embeddings, cosine. A fastText
# skipgram model (Debian's fasttext, 100 dimensions, one thread and a fixed
# seed, so the build is deterministic) is trained on the definitions of GCIDE
# (dict-gcide) and the glosses of WordNet 3.0 (wordnet-base); every distinct
# sentence of that text (4 to 60 tokens) is embedded with
# print-sentence-vectors. The last 1,000 distinct vectors are the queries
# (held out: never a copy of a base vector); ground truth is vecbench's exact
# float64 top 100 under cosine.
#
#   bench/data/gcide-fasttext.sh [OUT]   (default ~/.cache/cairn-data)
#
# Writes OUT/gcide-fasttext-100/gcide-fasttext-100.{base,query}.fvecs, .gt.ivecs,
# .metric and .texts.txt (the sentence of each row): 495,321 base vectors and
# 1,000 queries. About 8 minutes of CPU, most of it training on one thread.
#
# DIM, EPOCHS and SENTENCES in the environment make other sets from the
# same text: DIM=1536 EPOCHS=1 SENTENCES=101000 builds gcide-fasttext-1536,
# the first 101,000 (shuffled) sentences embedded at the width of OpenAI's
# text-embedding-3-small (about 25 minutes of CPU, 0.6 GB of vectors).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dim=${DIM:-100}
epochs=${EPOCHS:-5}
sentences=${SENTENCES:-}
name=gcide-fasttext-$dim
extract=()
packages=(fasttext dict-gcide wordnet-base python3-numpy)
if [ -n "${FOLDOC:-}" ]; then
	name=dicts-fasttext-$dim
	extract=(--foldoc)
	packages+=(dict-foldoc)
fi
out=${1:-$HOME/.cache/cairn-data}/$name
need=()
for p in "${packages[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p "$out/work"
cd "$out/work"
if [ ! -s corpus.txt ] || [ ! -s sentences.txt ]; then
	echo "$name: extracting sentences" >&2
	nice -n 19 /usr/bin/python3 "$repo/bench/data/dict_sentences.py" . "${extract[@]}"
fi
if [ ! -s model.bin ] || [ corpus.txt -nt model.bin ]; then
	echo "$name: training fastText (skipgram, $dim-d, $epochs epochs, 1 thread, seed 1)" >&2
	nice -n 19 fasttext skipgram -input corpus.txt -output model -dim "$dim" -epoch "$epochs" -minCount 3 \
		-bucket 200000 -thread 1 -seed 1 -verbose 1 >&2
fi
echo "$name: embedding sentences" >&2
if [ -n "$sentences" ]; then
	head -n "$sentences" sentences.txt > some-sentences.txt
else
	cp sentences.txt some-sentences.txt
fi
nice -n 19 fasttext print-sentence-vectors model.bin < some-sentences.txt > vectors.txt
nice -n 19 /usr/bin/python3 "$repo/bench/data/vecs_from_text.py" vectors.txt some-sentences.txt "$out/$name" 1000
rm -f vectors.txt some-sentences.txt
echo "$name: ground truth" >&2
(cd "$repo" && nice -n 19 go run ./cmd/vecbench --data "$out/$name.base.fvecs" --queries "$out/$name.query.fvecs" \
	--metric cosine --export "$out")
cat <<TXT
$name is in $out ($name.base.fvecs, .query.fvecs, .gt.ivecs, .metric)
Source: Debian packages dict-gcide $(dpkg-query -W -f='${Version}' dict-gcide) (GCIDE, GNU GPL v2 or later),
  wordnet-base $(dpkg-query -W -f='${Version}' wordnet-base) (WordNet 3.0 licence, Princeton University),
  fasttext $(dpkg-query -W -f='${Version}' fasttext) (MIT). The vectors are derived from GPL text:
  keep them out of the repository (see bench/data/README.md).
TXT
if [ -n "${FOLDOC:-}" ]; then
	echo "  With dict-foldoc $(dpkg-query -W -f='${Version}' dict-foldoc) (FOLDOC, GNU FDL 1.1 or later)."
fi
