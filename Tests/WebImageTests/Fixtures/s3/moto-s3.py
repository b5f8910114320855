#!/usr/bin/env python3
"""A real S3-compatible server (moto, server mode) on 127.0.0.1 for the S3 source tests.

    moto-s3.py BUCKET KEY=FILE [KEY=FILE ...]

Listens on a free port, creates BUCKET with the objects (each FILE's bytes), an IAM user
`reader` allowed s3:GetObject and a user `nobody` allowed nothing, then turns moto's
authentication on: from then on every request's Signature V4 is checked against the user's
secret key. Prints one JSON line (port and both users' keys) when ready; serves until its
standard input closes.
"""
import json
import sys
import urllib.request

import boto3
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
endpoint = f"http://127.0.0.1:{port}"
setup = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")

s3 = boto3.client("s3", **setup)
bucket = sys.argv[1]
s3.create_bucket(Bucket=bucket)
for item in sys.argv[2:]:
    key, path = item.split("=", 1)
    with open(path, "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())

iam = boto3.client("iam", **setup)
users = {}
for name, actions in (("reader", ["s3:GetObject"]), ("nobody", [])):
    iam.create_user(UserName=name)
    if actions:
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        iam.put_user_policy(UserName=name, PolicyName="read", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    users[name] = {"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}

# Roles with the same rights, and temporary credentials of each (what ECS, EKS and EC2 hand out),
# made while authentication is still off.
sts = boto3.client("sts", **setup)
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
roles = {}
for name, actions in (("reader", ["s3:GetObject"]), ("nobody", [])):
    arn = iam.create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    if actions:
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        iam.put_role_policy(RoleName=f"{name}-role", PolicyName="read", PolicyDocument=json.dumps(policy))
    temporary = sts.assume_role(RoleArn=arn, RoleSessionName="webimage-test")["Credentials"]
    roles[name] = {"id": temporary["AccessKeyId"], "secret": temporary["SecretAccessKey"], "token": temporary["SessionToken"]}

# Authentication on for every request from now on.
urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})).read()

print(json.dumps({"port": port, "users": users, "roles": roles}), flush=True)
sys.stdin.read()
server.stop()
