"""The three standard training-step benchmarks of `batchlab bench`, written in Keras 3 on TensorFlow.

The same networks as batchlab's and scripts/pytorch_steps.py's (Keras' own VGG16 layout with
biases and no dropout, the seed-003 small CNN, the MLP), optimizers, batch sizes and protocol:
per visit a fresh model, 2 warm-up steps dropped (the first traces and compiles the train
function), then timed steps; rounds that visit every case once in a shuffled order. A step is
`train_on_batch`, the compiled train function `fit` runs, with the model compiled as a Keras
user gets it (`jit_compile="auto"`); the loss it returns is a NumPy value, so the step has ended
when the clock is read. Images are channels-last, Keras' default on the CPU.

Prints the versions and threads, then ms per step per case: median and IQR, and every sample.
Run with `just bench-keras` (its own virtual environment, .venv-keras).
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402
from step_rounds import print_results, time_rounds  # noqa: E402

VGG16 = [[64, 64], [128, 128], [256] * 3, [512] * 3, [512] * 3]


def vgg16(input_hw, classes):
    """Keras' VGG16 layout: 3x3 convs with biases, 2x2 max pools, three dense layers."""
    net = [keras.Input((input_hw, input_hw, 3))]
    for stage in VGG16:
        net += [layers.Conv2D(c, 3, padding="same", activation="relu") for c in stage]
        net.append(layers.MaxPooling2D(2))
    net += [layers.Flatten(), layers.Dense(4096, activation="relu"),
            layers.Dense(4096, activation="relu"), layers.Dense(classes)]
    return keras.Sequential(net)


def small_cnn(input_hw):
    return keras.Sequential([
        keras.Input((input_hw, input_hw, 3)),
        layers.Conv2D(32, 3, padding="same", activation="relu"), layers.MaxPooling2D(2),
        layers.Flatten(), layers.Dense(128, activation="relu"), layers.Dense(1)])


def mlp():
    return keras.Sequential([
        keras.Input((28, 28, 1)), layers.Flatten(), layers.Dense(512, activation="relu"),
        layers.Dense(512, activation="relu"), layers.Dense(10)])


# name, model factory, input shape (channels last), classes, batch, optimizer factory
CASES = [
    ("vgg16 3x64x64 b16 sgd", lambda: vgg16(64, 1000), (64, 64, 3), 1000, 16,
     lambda: keras.optimizers.SGD(learning_rate=0.01)),
    ("small-cnn 3x200x200 b32 adam", lambda: small_cnn(200), (200, 200, 3), 1, 32,
     lambda: keras.optimizers.Adam(learning_rate=0.001, epsilon=1e-7)),
    ("mlp 784-512-512-10 b1024 sgd", mlp, (28, 28, 1), 10, 1024,
     lambda: keras.optimizers.SGD(learning_rate=0.01)),
]


def visit(case, warmup, samples):
    _, make, shape, classes, batch, optimizer = case
    model = make()
    if classes == 1:
        loss = keras.losses.BinaryCrossentropy(from_logits=True)
        labels = (np.arange(batch) % 2).astype("float32").reshape(batch, 1)
    else:
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        labels = (np.arange(batch) % classes).astype("int64")
    model.compile(optimizer=optimizer(), loss=loss)
    images = tf.random.normal((batch, *shape), seed=0)
    labels = tf.constant(labels)
    times = []
    for i in range(warmup + samples):
        start = time.perf_counter()
        model.train_on_batch(images, labels)
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0,
                        help="intra-op threads (0: TensorFlow's default, one per core)")
    args = parser.parse_args()
    if args.threads > 0:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    keras.utils.set_random_seed(0)
    threads = tf.config.threading.get_intra_op_parallelism_threads() or os.cpu_count()
    print(f"Keras {keras.__version__} on TensorFlow {tf.__version__}, {threads} threads, "
          f"{args.rounds} round(s) x (2 warm-up + {args.samples} timed steps) per case")
    print_results(time_rounds(CASES, visit, args.rounds, args.samples))

if __name__ == "__main__":
    main()
