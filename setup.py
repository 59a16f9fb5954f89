"""The package's two compiled pieces, both optional: the C kernel of `fangcheng.analysis`
(and of the bots' discard measures), and the observation encoder of `fangcheng.ai.env`.

Everything else is in pyproject.toml. Each extension is built from source with the
machine's C compiler; where there is none (or the build fails) setuptools skips it
(``optional=True``) and the install goes on: batch analysis then runs on numpy, the
per-hand analysis, the bots and the encoder on their Python code.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fangcheng.analysis._kernel",
            sources=["src/fangcheng/analysis/_kernel.c"],
            optional=True,
        ),
        Extension(
            "fangcheng.ai._encode",
            sources=["src/fangcheng/ai/_encode.c"],
            optional=True,
        ),
    ]
)
