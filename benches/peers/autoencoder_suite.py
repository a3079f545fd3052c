"""Autoencoder benchmark (issue 22, maths §16), one run on Fashion-MNIST (Debian's
dataset-fashion-mnist, all 784 pixels / 255): for d = 2 and 10, oose's Autoencoder
(layers 256,64, ReLU, Adam 1e-3, batch 128) against a PyTorch reference of the same
network, optimiser, batch size and loss on the CPU with the same threads:

- time per epoch (oose: a run without validation, EPOCHS epochs; PyTorch the same),
- reconstruction error of the test images (standardised units, per image) against PCA
  with the same d fitted on the standardised training images,
- out-of-sample kNN accuracy (k = 10) of the test images in each embedding.

usage: autoencoder_suite.py N M EPOCHS THREADS"""

import gzip
import sys
import time

import numpy as np
import torch
from sklearn.decomposition import PCA
from sklearn.neighbors import KNeighborsClassifier

import oose

PATH = "/usr/share/datasets/fashion-mnist/"
n, m, epochs, threads = map(int, sys.argv[1:5])
torch.set_num_threads(threads)


def idx(path):
    b = gzip.open(path).read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(dims)


X = idx(PATH + "train-images-idx3-ubyte.gz").reshape(60000, -1)[:n] / 255.0
y = idx(PATH + "train-labels-idx1-ubyte.gz")[:n]
T = idx(PATH + "t10k-images-idx3-ubyte.gz").reshape(10000, -1)[:m] / 255.0
yt = idx(PATH + "t10k-labels-idx1-ubyte.gz")[:m]
mean, sd = X.mean(0), X.std(0)
sd[sd == 0] = 1.0
Z, Zt = (X - mean) / sd, (T - mean) / sd


def knn(emb, emb_t):
    return KNeighborsClassifier(10).fit(emb, y).score(emb_t, yt)


def torch_reference(d):
    torch.manual_seed(0)
    lin = torch.nn.Linear
    enc = torch.nn.Sequential(lin(784, 256), torch.nn.ReLU(), lin(256, 64), torch.nn.ReLU(), lin(64, d))
    dec = torch.nn.Sequential(lin(d, 64), torch.nn.ReLU(), lin(64, 256), torch.nn.ReLU(), lin(256, 784))
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    data = torch.tensor(Z, dtype=torch.float64)
    enc.double(), dec.double()
    per_epoch = []
    gen = torch.Generator().manual_seed(0)
    for _ in range(epochs):
        t0 = time.perf_counter()
        for batch in torch.randperm(len(data), generator=gen).split(128):
            xb = data[batch]
            loss = ((dec(enc(xb)) - xb) ** 2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        per_epoch.append(time.perf_counter() - t0)
    with torch.no_grad():
        e, et = enc(data).numpy(), enc(torch.tensor(Zt)).numpy()
        rec = dec(enc(torch.tensor(Zt))).numpy()
    return np.median(per_epoch), float(((rec - Zt) ** 2).sum(1).mean()), knn(e, et)


print(f"Fashion-MNIST: {n} training, {m} test images, 784 -> 256 -> 64 -> d, ReLU, Adam 1e-3, "
      f"batch 128, float64, {epochs} epochs, {threads} threads")
for d in (2, 10):
    pca = PCA(d, random_state=0).fit(Z)
    pca_err = float(((pca.inverse_transform(pca.transform(Zt)) - Zt) ** 2).sum(1).mean())
    pca_acc = knn(pca.transform(Z), pca.transform(Zt))
    est = oose.Autoencoder(d, layers=(256, 64), epochs=epochs, validation_fraction=0.0, n_jobs=threads)
    t0 = time.perf_counter()
    est.fit(X)
    ours_epoch = (time.perf_counter() - t0) / est.n_iter_
    Yt, diag = est.transform(T, return_diagnostics=True)
    ours_err = float(diag["reconstruction_error"].mean())
    ours_acc = knn(est.embedding_, Yt)
    t_epoch, t_err, t_acc = torch_reference(d)
    print(f"d={d}: PCA test reconstruction error {pca_err:.2f}, kNN accuracy {pca_acc:.4f}")
    print(f"d={d}: oose     {ours_epoch:.2f} s/epoch (mean over {est.n_iter_}, fit included), "
          f"test reconstruction error {ours_err:.2f}, kNN accuracy {ours_acc:.4f}")
    print(f"d={d}: PyTorch  {t_epoch:.2f} s/epoch (median), test reconstruction error "
          f"{t_err:.2f}, kNN accuracy {t_acc:.4f}")
    print(f"d={d}: time per epoch oose/PyTorch {ours_epoch / t_epoch:.2f} (target <= 1)")
