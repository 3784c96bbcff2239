"""What a stack does for itself while CloudFormation deploys it (custom resources such as the migrations)."""
