"""Data package: the compatibility knowledge base (TOML), shipped inside the wheel as cudnn_doctor._compat."""
