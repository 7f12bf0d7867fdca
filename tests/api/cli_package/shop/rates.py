RATE = 2.0


def square(x):
    return x * x
