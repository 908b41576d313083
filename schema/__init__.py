"""The published JSON Schemas of every --json output, shipped in the wheel as cudnn_doctor._schema."""
