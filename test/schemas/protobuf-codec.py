# Encodes and decodes Protobuf messages with Google's Python implementation, for weir's tests:
#   python protobuf-codec.py <file.proto> <MessageType> encode|decode
# compiles the .proto with protoc (grpcio-tools), then per stdin line: encode reads the message
# in the proto3 JSON mapping (field names as written) and prints its bytes in hex; decode reads
# hex and prints the JSON mapping (int64 as strings, bytes as base64, enums by name).
import importlib
import os
import sys
import tempfile

from google.protobuf import json_format
from grpc_tools import protoc

proto, type_name, mode = sys.argv[1:4]
out = tempfile.mkdtemp()
folder = os.path.dirname(os.path.abspath(proto))
if protoc.main(["protoc", f"-I{folder}", f"--python_out={out}", os.path.abspath(proto)]) != 0:
    sys.exit(f"protoc refused {proto}")
sys.path.insert(0, out)
module = importlib.import_module(os.path.basename(proto)[: -len(".proto")] + "_pb2")
cls = module
for part in type_name.split("."):
    cls = getattr(cls, part)

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    if mode == "encode":
        print(json_format.Parse(line, cls()).SerializeToString().hex())
    else:
        msg = cls()
        msg.ParseFromString(bytes.fromhex(line))
        print(json_format.MessageToJson(msg, preserving_proto_field_name=True, indent=None))
