"""Count what a call does on the device: kernel launches, read-backs and waits.

:class:`DeviceCalls` patches, for the duration of a ``with`` block, the
places where numba launches a kernel and copies device memory to the host:
the simulator's kernel dispatch (``FakeCUDAKernel.__call__``, device
functions excluded) or the hardware dispatcher's launch configuration,
``copy_to_host`` of device arrays, and the stream and device
``synchronize``.  The kernels themselves run as they are: the counts are of
the real calls fastbleu makes.
"""

from __future__ import annotations

import os
from collections import Counter

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


class DeviceCalls:
    """``with DeviceCalls() as calls: ...`` then ``calls.launches``, ``calls.readbacks``,
    ``calls.waits`` and ``calls.kernels`` (launches by kernel name)."""

    def __init__(self):
        self.kernels: Counter = Counter()
        self.readbacks = 0
        self.waits = 0
        self._undo = []

    @property
    def launches(self) -> int:
        return sum(self.kernels.values())

    def _patch(self, owner, name, wrap):
        original = getattr(owner, name)
        setattr(owner, name, wrap(original))
        self._undo.append((owner, name, original))

    def __enter__(self) -> DeviceCalls:
        from numba import cuda

        calls = self

        def launch_sim(original):
            def call(kernel, *args):
                if not kernel._device:
                    calls.kernels[kernel.fn.__name__] += 1
                return original(kernel, *args)
            return call

        def launch_hw(original):
            def call(configured, *args):
                calls.kernels[configured.dispatcher.py_func.__name__] += 1
                return original(configured, *args)
            return call

        def readback(original):
            def copy(array, *args, **kwargs):
                calls.readbacks += 1
                return original(array, *args, **kwargs)
            return copy

        def wait(original):
            def sync(*args, **kwargs):
                calls.waits += 1
                return original(*args, **kwargs)
            return sync

        if SIMULATED:
            from numba.cuda.simulator import api, kernel
            from numba.cuda.simulator.cudadrv import devicearray

            self._patch(kernel.FakeCUDAKernel, "__call__", launch_sim)
            self._patch(devicearray.FakeCUDAArray, "copy_to_host", readback)
            self._patch(api.stream, "synchronize", wait)
        else:
            from numba.cuda import dispatcher
            from numba.cuda.cudadrv import devicearray, driver

            self._patch(dispatcher._LaunchConfiguration, "__call__", launch_hw)
            self._patch(devicearray.DeviceNDArrayBase, "copy_to_host", readback)
            self._patch(driver.Stream, "synchronize", wait)
        self._patch(cuda, "synchronize", wait)
        return self

    def __exit__(self, *exc) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)
        self._undo.clear()
