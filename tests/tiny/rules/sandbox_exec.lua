-- Tries to run a command while classifying (the sandbox has no os.execute).
function classify(row)
  os.execute("echo ran a command")
  return "x"
end
