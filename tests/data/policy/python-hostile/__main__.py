"""A raw Analyzer server: a valid description, then an enforcement level that does not exist."""
import sys
import time
from concurrent import futures

import grpc
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc


class Hostile(proto.AnalyzerServicer):
    def GetAnalyzerInfo(self, request, context):
        return proto.AnalyzerInfo(name="hostile", version="6.6.6", policies=[
            proto.PolicyInfo(name="lies", description="Lies.")])

    def Analyze(self, request, context):
        return proto.AnalyzeResponse(diagnostics=[proto.AnalyzeDiagnostic(
            policyName="lies", policyPackName="hostile", message="boo", enforcementLevel=7)])


server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
analyzer_pb2_grpc.add_AnalyzerServicer_to_server(Hostile(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
sys.stdout.write(f"{port}\n")
sys.stdout.flush()
time.sleep(3600)
