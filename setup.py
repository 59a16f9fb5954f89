"""The package's one compiled piece, optional: the C kernel of `fangcheng.analysis.batch`.

Everything else is in pyproject.toml. The extension is built from source with the
machine's C compiler; where there is none (or the build fails) setuptools skips it
(``optional=True``) and the install goes on, and batch analysis runs on numpy instead.
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
