"""google-cloud-storage's ACL, IAM, batch, HMAC key, notification and storage-class calls."""
import pytest
from google.api_core import exceptions
from google.cloud import storage


@pytest.fixture(scope="module")
def client(emulator):
    return storage.Client(project="test-project")


@pytest.fixture(scope="module")
def bucket(client):
    return client.create_bucket("py-resources", location="eu")


def test_object_acl_grant_save_reload_and_make_public(bucket):
    blob = bucket.blob("acl/a.txt")
    blob.upload_from_string(b"acl")
    blob.acl.reload()
    assert {entry["entity"] for entry in blob.acl} >= {"project-owners-0"}
    blob.acl.user("ann@example.com").grant_read()
    blob.acl.save()
    fresh = bucket.blob("acl/a.txt")
    fresh.acl.reload()
    assert "READER" in fresh.acl.user("ann@example.com").get_roles()
    fresh.make_public()
    again = bucket.blob("acl/a.txt")
    again.acl.reload()
    assert "READER" in again.acl.all().get_roles()
    again.acl.save_predefined("private")
    last = bucket.blob("acl/a.txt")
    last.acl.reload()
    assert [entry["entity"] for entry in last.acl] == ["project-owners-0"]


def test_bucket_and_default_object_acl(client, bucket):
    bucket.acl.reload()
    bucket.acl.group("team@example.com").grant_owner()
    bucket.acl.save()
    bucket.default_object_acl.reload()
    bucket.default_object_acl.all_authenticated().grant_read()
    bucket.default_object_acl.save()
    reloaded = client.get_bucket("py-resources")
    reloaded.acl.reload()
    assert "OWNER" in reloaded.acl.group("team@example.com").get_roles()
    # A new object takes the bucket's default object ACL.
    blob = bucket.blob("acl/new.txt")
    blob.upload_from_string(b"new")
    blob.acl.reload()
    assert "READER" in blob.acl.all_authenticated().get_roles()


def test_uniform_bucket_level_access_refuses_acls(client):
    ubla = client.bucket("py-ubla")
    ubla.iam_configuration.uniform_bucket_level_access_enabled = True
    ubla.create()
    with pytest.raises(exceptions.BadRequest):
        ubla.acl.reload()


def test_iam_policy_roundtrip_and_stale_etag(bucket):
    policy = bucket.get_iam_policy()
    assert policy.etag
    stale = bucket.get_iam_policy()
    policy.bindings.append({"role": "roles/storage.objectViewer", "members": {"allUsers"}})
    updated = bucket.set_iam_policy(policy)
    assert any(b["role"] == "roles/storage.objectViewer" for b in updated.bindings)
    assert "allUsers" in bucket.get_iam_policy()["roles/storage.objectViewer"]
    stale.bindings.append({"role": "roles/storage.admin", "members": {"user:x@example.com"}})
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.set_iam_policy(stale)
    granted = bucket.test_iam_permissions(["storage.objects.get", "storage.buckets.delete"])
    assert granted == ["storage.objects.get", "storage.buckets.delete"]


def test_batch_deletes_and_patches(client, bucket):
    names = [f"batch/{index}.txt" for index in range(5)]
    for name in names:
        bucket.blob(name).upload_from_string(name.encode())
    with client.batch():
        for name in names[:3]:
            bucket.delete_blob(name)
        patched = bucket.blob(names[3])
        patched.metadata = {"via": "batch"}
        patched.patch()
    assert sorted(blob.name for blob in client.list_blobs(bucket, prefix="batch/")) == names[3:]
    assert bucket.get_blob(names[3]).metadata == {"via": "batch"}
    # A failing part is reported (the last failure is raised, as the client does).
    with pytest.raises(exceptions.NotFound):
        with client.batch():
            bucket.delete_blob(names[4])
            bucket.delete_blob("batch/missing.txt")
    assert bucket.get_blob(names[4]) is None


def test_service_account_and_hmac_keys(client):
    email = client.get_service_account_email()
    assert email.endswith("@gs-project-accounts.iam.gserviceaccount.com")
    metadata, secret = client.create_hmac_key(service_account_email="sa@test-project.iam.gserviceaccount.com")
    assert len(secret) == 40 and metadata.state == "ACTIVE"
    assert metadata.access_id in [key.access_id for key in client.list_hmac_keys()]
    with pytest.raises(exceptions.BadRequest):
        metadata.delete()  # an ACTIVE key cannot be deleted
    metadata.state = "INACTIVE"
    metadata.update()
    metadata.reload()
    assert metadata.state == "INACTIVE"
    metadata.delete()
    assert metadata.access_id not in [key.access_id for key in client.list_hmac_keys()]
    assert metadata.access_id in [key.access_id for key in client.list_hmac_keys(show_deleted_keys=True)]


def test_notification_configs(bucket):
    notification = bucket.notification(topic_name="uploads", topic_project="test-project", event_types=["OBJECT_FINALIZE"])
    notification.create()
    assert notification.notification_id
    assert notification.exists()
    listed = list(bucket.list_notifications())
    assert [n.notification_id for n in listed] == [notification.notification_id]
    assert listed[0].topic_name == "uploads" and listed[0].event_types == ["OBJECT_FINALIZE"]
    notification.delete()
    assert not notification.exists()


def test_storage_class_on_upload_and_rewrite(client, bucket):
    blob = bucket.blob("classes/a.bin")
    blob.storage_class = "NEARLINE"
    blob.upload_from_string(b"class")
    assert bucket.get_blob("classes/a.bin").storage_class == "NEARLINE"
    blob.update_storage_class("COLDLINE")
    assert bucket.get_blob("classes/a.bin").storage_class == "COLDLINE"
    plain = bucket.blob("classes/b.bin")
    plain.upload_from_string(b"plain")
    assert bucket.get_blob("classes/b.bin").storage_class == "STANDARD"
