#!/usr/bin/env bash
# Autoencoder benchmark (issue 22, maths §16): Fashion-MNIST from Debian's
# dataset-fashion-mnist, oose's Autoencoder against a PyTorch reference of the same
# network on the CPU, same threads, one run (benches/peers/autoencoder_suite.py).
# PyTorch lives only in this benchmark's own .venv-ae. AE_N (default 60000) training
# and AE_M (default 10000) test images, AE_EPOCHS (default 5), AE_THREADS (default 2).
. "$(dirname "$0")/common.sh"
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist >/dev/null
fi
oose_env .venv-ae torch numpy scikit-learn
.venv-ae/bin/python benches/peers/autoencoder_suite.py "${AE_N:-60000}" "${AE_M:-10000}" \
  "${AE_EPOCHS:-5}" "${AE_THREADS:-2}"
.venv-ae/bin/python benches/peers/vae_far.py
