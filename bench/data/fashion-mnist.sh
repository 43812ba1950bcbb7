#!/usr/bin/env bash
# Builds fashion-mnist-784-euclidean: Zalando's Fashion-MNIST images (Debian's
# dataset-fashion-mnist), 60,000 base vectors of 784 pixel values (0..255,
# float32) and the first 1,000 test images as queries (held out; none equals
# a base image), L2, as ann-benchmarks' fashion-mnist-784-euclidean. It is
# written first as an ann-benchmarks HDF5 file (h5py, the layout of
# ann-benchmarks' datasets.py, with exact float64 neighbors), then read with
# vecbench's HDF5 reader, which checks those neighbors against its own exact
# ground truth and exports the TEXMEX files.
#
#   bench/data/fashion-mnist.sh [OUT]   (default ~/.cache/cairn-data)
#
# Writes OUT/fashion-mnist-784-euclidean/fashion-mnist-784-euclidean.{hdf5,
# base.fvecs,query.fvecs,gt.ivecs,metric}. About 1 minute of CPU.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=fashion-mnist-784-euclidean
out=${1:-$HOME/.cache/cairn-data}/$name
need=()
for p in dataset-fashion-mnist python3-h5py python3-numpy; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p "$out"
echo "$name: writing the ann-benchmarks HDF5 file" >&2
nice -n 19 /usr/bin/python3 "$repo/bench/data/fashion_mnist.py" "$out/$name.hdf5" 1000
echo "$name: reading it with vecbench, checking its neighbors, exporting" >&2
(cd "$repo" && nice -n 19 go run ./cmd/vecbench --data "$out/$name.hdf5" --export "$out")
cat <<TXT
$name is in $out ($name.hdf5, .base.fvecs, .query.fvecs, .gt.ivecs, .metric)
Source: Debian package dataset-fashion-mnist $(dpkg-query -W -f='${Version}' dataset-fashion-mnist),
  Fashion-MNIST by Zalando Research (Xiao, Rasul and Vollgraf, 2017), MIT licence.
TXT
