"""The CUDA path: PTX from the same IR and scalar lowering as the CPU JIT.

Modules:

* ``toolkit``  -- where ``libdevice.10.bc`` and ``ptxas`` are (the PyPI package
  ``nvidia-cuda-nvcc-cu12``, extra ``s2s[ptx]``, or ``$CUDA_HOME``);
* ``target``   -- the NVPTX target machines (``sm_80`` default), optimisation
  and PTX emission;
* ``libdevice`` -- math calls (``llvm.sin.f64``, ``tanh``...) as libdevice's
  ``__nv_*`` functions, linked in with the NVVM reflect setting;
* ``kernel``   -- the elementwise kernel around a device function lowered by
  ``backend.llvm.lower.function.FunctionLowering`` (thread index, bounds check, loads,
  stores, error word, ``nvvm.annotations``);
* ``indexed``  -- the index form: a kernel body that reads ``s2s.cuda.grid(1)``
  and writes arrays in place;
* ``compile``  -- kernel IR text -> PTX (cached), ``ptxas`` -- assembling PTX.

The user APIs (``s2s.cuda.vectorize``, ``s2s.cuda.kernel``) and the launch marshalling on
top of ``s2s_runtime.cuda`` are a layer up, in ``core/cuda_vectorize.py`` and
``core/cuda_kernel.py``; ``s2s dump --mode ptx`` is ``cli/dump_ptx.py``.
"""
