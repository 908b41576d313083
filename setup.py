"""Package discovery: every package under cudnn_doctor/, plus compat/ and schema/ shipped inside it as
cudnn_doctor._compat and cudnn_doctor._schema.

pyproject.toml cannot express both at once (a `packages.find` table finds only folders named like their package),
so the list is computed here; everything else about the build lives in pyproject.toml.
"""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["cudnn_doctor", "cudnn_doctor.*"]) + ["cudnn_doctor._compat",
                                                                                       "cudnn_doctor._schema"])
