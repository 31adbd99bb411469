#include "command_files.hpp"

#include "moesim/config/error.hpp"

namespace moesim::cli {

void CommandFiles::input(const std::filesystem::path& file, const std::string& role) {
  inputs_.push_back({file, role});
}

void CommandFiles::inputs_read(const config::InputRecorder& recorder, const std::string& first_role) {
  const auto& files = recorder.files();
  for (std::size_t i = 0; i < files.size(); ++i)
    input(files[i], i == 0 ? first_role : "a configuration file it references");
}

void CommandFiles::output(const std::filesystem::path& file, const std::string& role) {
  if (file.empty() || file == "-") return;
  outputs_.push_back({file, role});
}

void CommandFiles::refuse_clashes() const {
  if (const auto clash = util::find_clash(inputs_, outputs_))
    throw ConfigError(clash->output.role, "$", "a file that is neither an input nor another output; " + clash->message());
}

}  // namespace moesim::cli
