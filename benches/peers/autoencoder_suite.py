"""Autoencoder benchmark (issue 22, maths §16), one run on Fashion-MNIST (Debian's
dataset-fashion-mnist, all 784 pixels / 255): for d = 2 and 10, oose's Autoencoder
(layers 256,64, ReLU, Adam 1e-3, batch 128) against a PyTorch reference of the same
network, optimiser, batch size and loss on the CPU with the same threads:

- time per epoch, in float64 and in float32 (oose's ``precision``; PyTorch's default
  is float32): oose's median interval between its per-epoch progress reports
  (verbose=True, sys.stderr captured with time stamps; epochs 2 to EPOCHS), so that
  what a fit does once (standardising, the embedding, the novelty calibration's kNN
  graph) is not counted but shown apart; PyTorch's median epoch of the same number of
  epochs in the same precision,
- reconstruction error of the test images (standardised units, per image) against PCA
  with the same d fitted on the standardised training images,
- out-of-sample kNN accuracy (k = 10) of the test images in each embedding,
- the variational autoencoder (d = 2, beta = 1): mean negative ELBO of the test images
  and mean posterior variance on the test images against uniform-noise images.

usage: autoencoder_suite.py N M EPOCHS THREADS"""

import contextlib
import sys
import time

import numpy as np
import torch
from sklearn.decomposition import PCA
from sklearn.neighbors import KNeighborsClassifier

import oose

sys.path.insert(0, "benches/peers")
from fashion import pixels  # noqa: E402

n, m, epochs, threads = map(int, sys.argv[1:5])
torch.set_num_threads(threads)


X, y, T, yt = pixels(n, m)
mean, sd = X.mean(0), X.std(0)
sd[sd == 0] = 1.0
Z, Zt = (X - mean) / sd, (T - mean) / sd


class EpochStamps:
    """A stand-in for sys.stderr that notes when each "epoch k/E, loss" report arrives."""

    def __init__(self):
        self.times = []

    def write(self, text):
        if "epoch" in text and "loss" in text:
            self.times.append(time.perf_counter())

    def flush(self):
        pass


def knn(emb, emb_t):
    return KNeighborsClassifier(10).fit(emb, y).score(emb_t, yt)


def torch_reference(d, dtype=torch.float64, epochs=epochs):
    torch.manual_seed(0)
    lin = torch.nn.Linear
    enc = torch.nn.Sequential(lin(784, 256), torch.nn.ReLU(), lin(256, 64), torch.nn.ReLU(), lin(64, d))
    dec = torch.nn.Sequential(lin(d, 64), torch.nn.ReLU(), lin(64, 256), torch.nn.ReLU(), lin(256, 784))
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    data = torch.tensor(Z, dtype=dtype)
    enc.to(dtype), dec.to(dtype)
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
        test = torch.tensor(Zt, dtype=dtype)
        e, et = enc(data).double().numpy(), enc(test).double().numpy()
        rec = dec(enc(test)).double().numpy()
    return np.median(per_epoch), float(((rec - Zt) ** 2).sum(1).mean()), knn(e, et)


def ours(d, precision):
    stamps = EpochStamps()
    est = oose.Autoencoder(d, layers=(256, 64), epochs=epochs, validation_fraction=0.0,
                           precision=precision, n_jobs=threads, verbose=True)
    t0 = time.perf_counter()
    with contextlib.redirect_stderr(stamps):
        est.fit(X)
    fit_time = time.perf_counter() - t0
    epoch = float(np.median(np.diff(stamps.times)))
    Yt, diag = est.transform(T, return_diagnostics=True)
    print(f"d={d}: oose    {precision} {epoch:.2f} s/epoch (median; the whole fit "
          f"{fit_time:.1f} s, of which {fit_time - (stamps.times[-1] - t0):.1f} s after the "
          f"last epoch), test reconstruction error {diag['reconstruction_error'].mean():.2f}, "
          f"kNN accuracy {knn(est.embedding_, Yt):.4f}")
    return epoch


print(f"Fashion-MNIST: {n} training, {m} test images, 784 -> 256 -> 64 -> d, ReLU, Adam 1e-3, "
      f"batch 128, {epochs} epochs, {threads} threads")
for d in (2, 10):
    pca = PCA(d, random_state=0).fit(Z)
    pca_err = float(((pca.inverse_transform(pca.transform(Zt)) - Zt) ** 2).sum(1).mean())
    pca_acc = knn(pca.transform(Z), pca.transform(Zt))
    print(f"d={d}: PCA test reconstruction error {pca_err:.2f}, kNN accuracy {pca_acc:.4f}")
    for precision, dtype in (("float64", torch.float64), ("float32", torch.float32)):
        ours_epoch = ours(d, precision)
        t_epoch, t_err, t_acc = torch_reference(d, dtype)
        print(f"d={d}: PyTorch {precision} {t_epoch:.2f} s/epoch (median), test reconstruction "
              f"error {t_err:.2f}, kNN accuracy {t_acc:.4f}")
        print(f"d={d}: time per epoch oose/PyTorch, {precision}: {ours_epoch / t_epoch:.2f} "
              f"(target <= 1)")

vae = oose.VariationalAutoencoder(2, layers=(256, 64), epochs=epochs, n_jobs=threads).fit(X)
_, dt = vae.transform(T, return_diagnostics=True)
noise = np.random.default_rng(0).uniform(0, 1, size=(1000, X.shape[1]))
_, dn = vae.transform(noise, return_diagnostics=True)
print(f"VAE d=2, {vae.n_iter_} epochs (best {vae.best_epoch_}): test mean negative ELBO "
      f"{dt['negative_elbo'].mean():.2f} (reconstruction {dt['reconstruction_error'].mean():.2f}), "
      f"posterior variance test {np.mean(dt['posterior_variance']):.4f} vs noise images "
      f"{np.mean(dn['posterior_variance']):.4f}")
