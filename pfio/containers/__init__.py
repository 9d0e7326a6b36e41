"""Containers: zip and tar archives opened as filesystems over a file from any filesystem."""
