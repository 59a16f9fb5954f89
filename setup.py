"""The package's one compiled piece, optional: the C kernel of `fangcheng.analysis` (and
of the bots' discard measures).

Everything else is in pyproject.toml. The extension is built from source with the
machine's C compiler; where there is none (or the build fails) setuptools skips it
(``optional=True``) and the install goes on: batch analysis then runs on numpy, the
per-hand analysis and the bots on their Python code.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fangcheng.analysis._kernel",
            sources=["src/fangcheng/analysis/_kernel.c"],
            optional=True,
        )
    ]
)
