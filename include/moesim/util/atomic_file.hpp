#pragma once
// Output files are written whole or not at all, and writing one never destroys anything but
// the file's previous content:
//  - a regular file (or a new one): the content goes to a temporary file beside it, renamed
//    over it once everything is written (its permissions kept); the temporary file is removed
//    on failure and on SIGINT / SIGTERM (temp_files.hpp);
//  - a symbolic link: the same, at the file it points to, in that file's folder; the link
//    itself stays a link;
//  - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to that open descriptor,
//    exactly as `-o -` writes to standard output (appending to what a shell redirect opened);
//  - another character device or a FIFO (/dev/null, a named pipe): opened and written to;
//  - a directory, block device or socket: refused.
#include <filesystem>
#include <string>

namespace moesim::util {

// Throws std::runtime_error naming the path and the reason (a missing folder, no permission, a
// path that names a directory or a block device, a full disk) and leaves nothing behind.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// The descriptor a path names directly ("/dev/stdout" -> 1, "/dev/fd/3" -> 3), or -1.
int descriptor_path(const std::filesystem::path& path);

// Writes all of `content` to `fd`; false with errno set on failure.
bool write_all(int fd, const std::string& content);

}  // namespace moesim::util
